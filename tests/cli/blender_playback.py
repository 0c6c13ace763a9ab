"""`untangle run --obj-dir DIR --pc2 FILE` plays back in Blender (issue 3): the OBJ imports as one
object whose vertex order is the cache's, and a Mesh Cache modifier (PC2, frame start 1) shows
sample k of the cache at scene frame k + 1, exactly.

Run: blender -b --factory-startup --python-exit-code 1 --python tests/cli/blender_playback.py -- UNTANGLE
"""

import os
import struct
import subprocess
import sys
import tempfile

import bpy

cli = sys.argv[sys.argv.index("--") + 1]
with tempfile.TemporaryDirectory(prefix="untangle_playback_") as tmp:
    cache_path = os.path.join(tmp, "run.pc2")
    subprocess.run([cli, "run", "two-sheets", "--frames", "3", "--obj-dir", tmp, "--pc2",
                    cache_path], check=True, stdout=subprocess.DEVNULL)
    bpy.ops.wm.read_factory_settings(use_empty=True)
    # Up Z / forward Y: the engine's axes, so the imported mesh needs no conversion.
    bpy.ops.wm.obj_import(filepath=os.path.join(tmp, "two-sheets.obj"), forward_axis="Y",
                          up_axis="Z")
    meshes = [o for o in bpy.context.scene.objects if o.type == "MESH"]
    assert len(meshes) == 1, "the OBJ must import as one object, got %d" % len(meshes)
    obj = meshes[0]

    with open(cache_path, "rb") as f:
        data = f.read()
    _, _, n, _, _, count = struct.unpack("<12siiffi", data[:32])
    assert len(obj.data.vertices) == n, (len(obj.data.vertices), n)
    samples = [struct.unpack("<%df" % (3 * n), data[32 + 12 * n * k:32 + 12 * n * (k + 1)])
               for k in range(count)]
    imported = [c for v in obj.data.vertices for c in v.co]
    error = max(abs(a - b) for a, b in zip(imported, samples[0]))
    assert error < 1e-6, "the OBJ is not the cache's frame 0 (max difference %g)" % error

    modifier = obj.modifiers.new("cache", "MESH_CACHE")
    modifier.cache_format = "PC2"
    modifier.filepath = cache_path
    modifier.frame_start = 1
    for k in range(count):
        bpy.context.scene.frame_set(k + 1)
        evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get()).data
        played = [c for v in evaluated.vertices for c in v.co]
        error = max(abs(a - b) for a, b in zip(played, samples[k]))
        assert error == 0, "scene frame %d differs from sample %d by %g" % (k + 1, k, error)
    assert samples[-1] != samples[0], "the sheets did not move"
    print("playback ok: %d samples of %d vertices" % (count, n))
