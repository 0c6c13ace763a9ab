"""Untangle Selected repairs meshes tangled by Blender's own cloth solver, as checked by
Blender's BVHTree.overlap (not the library's detector); two objects cutting
into each other come apart; a modifier-deformed object gets a corrective shape key and keeps
its base mesh. (Undo is checked in a window: window_undo.py.)"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import addon_harness as h  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

package, scripts = h.install()


def applied_tangle(name="Tangled"):
    """A cloth-tangled grid with its simulation applied, so the mesh itself is tangled."""
    cloth, sphere = h.tangled_cloth(name=name)
    h.select_only([cloth])
    bpy.ops.object.modifier_apply(modifier="Cloth")
    bpy.data.objects.remove(sphere)
    return cloth


def test_untangles_blender_cloth_tangle():
    h.empty_scene()
    cloth = applied_tangle()
    before = h.world_positions(cloth, evaluated=False)
    pairs_before = h.object_pairs(cloth)
    h.expect(len(pairs_before) > 10, f"the Blender cloth made only {len(pairs_before)} pairs")
    h.select_only([cloth])
    bpy.context.scene.cloth_untangle.strain_limit = 0.03
    result = bpy.ops.cloth_untangle.untangle_selected()
    h.expect(result == {'FINISHED'}, result)
    after = h.world_positions(cloth, evaluated=False)
    h.expect(len(h.object_pairs(cloth)) == 0,
             f"{len(h.object_pairs(cloth))} pairs left (Blender overlap)")
    # The panel's strain limit holds on every polygon side (measured here, not reported).
    worst = max(abs(np.linalg.norm(after[b] - after[a]) / np.linalg.norm(before[b] - before[a]) - 1)
                for polygon in h.polygons(cloth)
                for a, b in zip(polygon, polygon[1:] + polygon[:1]))
    h.expect(worst <= 0.03 + 2e-4, f"edge strain {worst} above the 0.03 limit")
    # The library counts triangle pairs, Blender polygon pairs: only the form is comparable.
    status = bpy.context.scene.cloth_untangle.status
    h.expect(re.fullmatch(r"[1-9]\d* intersections → 0 in [1-9]\d* iterations", status), status)
    # The shape is kept: untangling moves vertices by a fraction of the cloth size only.
    moved = np.linalg.norm(after - before, axis=1)
    h.expect(0 < moved.max() < 0.5, f"max displacement {moved.max()}")
    h.expect(cloth.data.shape_keys is None, "a plain mesh must be written, not a shape key")
    # Undo needs a window (ed.undo's poll fails in -b): window_undo.py checks it under Xvfb.


def crossing_sheets():
    """A flat grid and a tilted one whose lower part cuts through it along an open contour."""
    h.empty_scene()
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=20, y_subdivisions=20, size=2.0)
    flat = bpy.context.active_object
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=20, y_subdivisions=20, size=1.2,
                                    location=(0.1, 0.05, 0.3), rotation=(0.05, 0.6, 0.3))
    return flat, bpy.context.active_object


def test_two_objects_cut_into_each_other_come_apart():
    flat, steep = crossing_sheets()
    crossing = h.overlap_pairs(h.world_positions(flat), h.polygons(flat),
                               h.world_positions(steep), h.polygons(steep))
    h.expect(len(crossing) > 0, "the sheets do not cross")
    h.select_only([flat, steep])
    h.expect(bpy.ops.cloth_untangle.untangle_selected() == {'FINISHED'}, "operator failed")
    left = h.overlap_pairs(h.world_positions(flat), h.polygons(flat),
                           h.world_positions(steep), h.polygons(steep))
    h.expect(len(left) == 0, f"{len(left)} pairs between the objects left")
    h.expect(len(h.object_pairs(flat)) == 0 and len(h.object_pairs(steep)) == 0,
             "self-intersections made")


def sewn_panels_and_crossing():
    """Two grid objects side by side whose border vertices at x = 0 coincide (panels sewn as
    pattern tools export them, one object each) and a vertical sheet crossing next to the seam."""
    h.empty_scene()
    panels = []
    for x in (-0.5, 0.5):
        bpy.ops.mesh.primitive_grid_add(x_subdivisions=11, y_subdivisions=11, size=1.0,
                                        location=(x, 0.0, 0.0))
        panels.append(bpy.context.active_object)
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=6, y_subdivisions=6, size=0.6,
                                    location=(0.05, 0.013, 0.0), rotation=(0.0, 1.5707963, 0.0))
    return panels, bpy.context.active_object


def seam_copies(left, right):
    """(i, j): vertex i of the left panel and vertex j of the right one at the same place."""
    a, b = h.world_positions(left, evaluated=False), h.world_positions(right, evaluated=False)
    return [(i, j) for i in range(len(a)) for j in range(len(b)) if np.array_equal(a[i], b[j])]


def seam_gap(left, right, copies):
    a, b = h.world_positions(left, evaluated=False), h.world_positions(right, evaluated=False)
    return max(np.linalg.norm(a[i] - b[j]) for i, j in copies)


def crossing_pairs(panels, crossing):
    return sum(len(h.overlap_pairs(h.world_positions(p), h.polygons(p),
                                   h.world_positions(crossing), h.polygons(crossing)))
               for p in panels)


def test_sewn_panels_stay_sewn():
    """Panels sewn by coincident vertices come out sewn (their seams are sewn for the untangler);
    with Keep Seams Apart the copies are separate vertices and this seam opens."""
    for keep_apart in (False, True):
        (left, right), crossing = sewn_panels_and_crossing()
        copies = seam_copies(left, right)
        h.expect(len(copies) == 12, f"{len(copies)} seam copies, expected 12")
        h.expect(crossing_pairs((left, right), crossing) > 0, "the sheet does not cross")
        h.select_only([left, right, crossing])
        bpy.context.scene.cloth_untangle.keep_seams_apart = keep_apart
        h.expect(bpy.ops.cloth_untangle.untangle_selected() == {'FINISHED'}, "operator failed")
        left_over = crossing_pairs((left, right), crossing)
        h.expect(left_over == 0, f"{left_over} pairs with the crossing sheet left")
        gap = seam_gap(left, right, copies)
        if keep_apart:
            h.expect(gap > 1e-3, f"kept apart, the seam should open: gap {gap}")
        else:
            # Each object stores its result in its own space, in floats: copies of one world
            # position can differ there by a float's rounding.
            h.expect(gap < 1e-6, f"the seam opened by {gap}")
    bpy.context.scene.cloth_untangle.keep_seams_apart = False


def test_deformed_object_gets_corrective_shape_key():
    h.empty_scene()
    cloth = applied_tangle("Deformed")
    base = np.empty(len(cloth.data.vertices) * 3, dtype=np.float32)
    cloth.data.vertices.foreach_get("co", base)
    # A uniform displacement along z: the evaluated mesh differs from the base mesh.
    displace = cloth.modifiers.new("Displace", 'DISPLACE')
    displace.direction = 'Z'
    displace.strength = 0.3
    h.expect(len(h.object_pairs(cloth)) > 0, "no tangle in the evaluated mesh")
    h.select_only([cloth])
    h.expect(bpy.ops.cloth_untangle.untangle_selected() == {'FINISHED'}, "operator failed")
    keys = cloth.data.shape_keys
    h.expect(keys is not None and "Untangled" in keys.key_blocks, "no Untangled shape key")
    h.expect(keys.key_blocks["Untangled"].value == 1.0, "shape key not active")
    basis = np.empty(len(cloth.data.vertices) * 3, dtype=np.float32)
    keys.key_blocks["Basis"].data.foreach_get("co", basis)
    h.expect(np.array_equal(basis, base), "the base shape changed")
    h.expect(len(h.object_pairs(cloth)) == 0,
             f"{len(h.object_pairs(cloth))} pairs left in the evaluated mesh")
    h.expect("shape key" in bpy.context.scene.cloth_untangle.status,
             bpy.context.scene.cloth_untangle.status)
    # The key at half its value shows half the correction: tangled again. A second run must
    # start from what the key shows now, not from its relative key.
    keys.key_blocks["Untangled"].value = 0.5
    h.expect(len(h.object_pairs(cloth)) > 0, "half the correction is still clean")
    h.expect(bpy.ops.cloth_untangle.untangle_selected() == {'FINISHED'}, "second run failed")
    h.expect(len(h.object_pairs(cloth)) == 0,
             f"{len(h.object_pairs(cloth))} pairs left after the second run")


def mesh_state(objects):
    return [(h.world_positions(obj, evaluated=False).copy(), obj.data.shape_keys is None)
            for obj in objects]


def expect_refused(objects, *fragments):
    """Untangle Selected is cancelled with a message naming the problem, and no object changed."""
    before = mesh_state(objects)
    h.select_only(objects)
    h.expect_error(bpy.ops.cloth_untangle.untangle_selected, *fragments)
    status = bpy.context.scene.cloth_untangle.status
    for fragment in fragments:
        h.expect(fragment in status, f"{fragment!r} not in the status {status!r}")
    for (positions, no_keys), (now, still_no_keys) in zip(before, mesh_state(objects)):
        h.expect(np.array_equal(positions, now) and no_keys == still_no_keys, "a mesh changed")


def test_refuses_results_it_could_not_write_and_changes_nothing():
    flat, steep = crossing_sheets()
    # Zero scale along the grid's normal: it still cuts the flat sheet, but its mesh cannot take
    # a world-space result.
    steep.scale = (1.0, 1.0, 0.0)
    bpy.context.view_layer.update()
    h.expect(len(h.overlap_pairs(h.world_positions(flat), h.polygons(flat),
                                 h.world_positions(steep), h.polygons(steep))) > 0, "no crossing")
    expect_refused([flat, steep], steep.name, "zero scale")
    steep.scale = (1.0, 1.0, 1.0)
    # A second object of the same mesh, turned so that it cuts the first: two results, one mesh.
    twin = bpy.data.objects.new("Twin", flat.data)
    bpy.context.scene.collection.objects.link(twin)
    twin.location, twin.rotation_euler = (0.1, 0.05, 0.3), (0.05, 0.6, 0.3)
    bpy.context.view_layer.update()
    expect_refused([flat, twin], "share one mesh")
    # A live cloth simulation past its first frame: a shape key would not reach its shape.
    h.empty_scene()
    cloth, _ = h.tangled_cloth(name="Simulated")
    h.expect(len(h.object_pairs(cloth)) > 0, "the simulation is not tangled")
    expect_refused([cloth], "Simulated", "Cloth", "Bake Untangled Cache")


h.run([test_untangles_blender_cloth_tangle,
       test_two_objects_cut_into_each_other_come_apart,
       test_sewn_panels_stay_sewn,
       test_deformed_object_gets_corrective_shape_key,
       test_refuses_results_it_could_not_write_and_changes_nothing])
