"""Undo after Untangle Selected restores the tangled positions exactly.

ed.undo needs a window, which `blender -b` does not have, so this runs in a windowed Blender
under Xvfb (tests/blender/CMakeLists.txt registers it when xvfb-run is installed).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import addon_harness as h  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

package, scripts = h.install()


def test_undo_restores_the_tangle():
    h.expect(bpy.context.window is not None, "this test needs a window (run it under Xvfb)")
    h.empty_scene()
    cloth, sphere = h.tangled_cloth(name="Tangled")
    h.select_only([cloth])
    bpy.ops.object.modifier_apply(modifier="Cloth")
    before = h.world_positions(cloth, evaluated=False)
    h.expect(len(h.object_pairs(cloth)) > 0, "no tangle to undo")
    bpy.ops.ed.undo_push(message="tangled")
    # Called as the UI calls it (undo=True): the operator's UNDO flag makes it push a step.
    h.expect(bpy.ops.cloth_untangle.untangle_selected('EXEC_DEFAULT', True) == {'FINISHED'},
             "untangle failed")
    after = h.world_positions(cloth, evaluated=False)
    h.expect(not np.array_equal(after, before), "untangle changed nothing")
    h.expect(len(h.object_pairs(cloth)) == 0, "tangle left")
    bpy.ops.ed.undo()
    restored = h.world_positions(bpy.data.objects["Tangled"], evaluated=False)
    h.expect(np.array_equal(restored, before), "undo did not restore the tangled positions")
    bpy.ops.ed.redo()
    redone = h.world_positions(bpy.data.objects["Tangled"], evaluated=False)
    h.expect(np.array_equal(redone, after), "redo did not bring the untangled positions back")


h.run([test_undo_restores_the_tangle])
