"""The Method and Scene menus list the library's own names; Add Scene builds each reference
scene as Blender objects with the SPEC's sizes and its settings stored on them; Run Scene's
per-tick step (called directly: the modal loop needs a window) advances the world, writes the
meshes and takes the panel's switches live; Bake Scene of the tangled start writes a PC2 in which
Blender's own overlap test sees the intersections fall to 0; Show Intersections selects exactly
the faces Blender's overlap finds."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import addon_harness as h  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

package, scripts = h.install()
from cloth_untangle import native, operators, properties  # noqa: E402  (the installed copy)


def add(scene_name):
    h.empty_scene()
    h.expect(bpy.ops.cloth_untangle.add_scene(scene=scene_name) == {'FINISHED'}, scene_name)
    objects = list(bpy.context.scene.objects)
    by_role = {role: sorted((o for o in objects if o.cloth_untangle.role == role),
                            key=lambda o: o.cloth_untangle.piece)
               for role in ('CLOTH', 'SPHERE', 'GROUND')}
    return by_role


def edge_lengths(obj):
    edges = np.empty(len(obj.data.edges) * 2, dtype=np.int32)
    obj.data.edges.foreach_get("vertices", edges)
    co = h.world_positions(obj, evaluated=False)
    pairs = edges.reshape(-1, 2)
    return np.linalg.norm(co[pairs[:, 0]] - co[pairs[:, 1]], axis=1)


def test_the_menus_list_the_librarys_methods_and_scenes():
    # The menus need labels of their own, keyed by the library's names (ut_method_name,
    # ut_scene_name): a method or scene the library gains or renames must show here too.
    methods = [key for key, _, _ in properties.METHOD_ITEMS]
    scenes = [key for key, _, _ in properties.SCENE_ITEMS]
    h.expect(methods == list(native.METHODS), f"{methods} != {native.METHODS}")
    h.expect(scenes == list(native.SCENES), f"{scenes} != {native.SCENES}")


def test_add_scene_builds_the_three_scenes():
    # SPEC: tangled start 50 x 50 at 0.1, dropped cloth 40 x 40 at 0.145, two sheets 2 x 22 x 22.
    for name, vertex_counts, spacing, spheres in (("tangled-start", [2500], 0.1, 0),
                                                   ("dropped-cloth", [1600], 0.145, 1),
                                                   ("two-sheets", [484, 484], None, 1)):
        objects = add(name)
        cloths = objects['CLOTH']
        h.expect([len(c.data.vertices) for c in cloths] == vertex_counts,
                 f"{name}: {[len(c.data.vertices) for c in cloths]}")
        h.expect(len(objects['SPHERE']) == spheres, f"{name}: {len(objects['SPHERE'])} spheres")
        if spheres:
            h.expect(len(objects['GROUND']) == 1, f"{name}: no ground")
            sphere = objects['SPHERE'][0]
            centre = h.world_positions(sphere, evaluated=False).mean(axis=0)
            radius = np.linalg.norm(h.world_positions(sphere, evaluated=False) - centre,
                                    axis=1).max()
            h.expect(abs(radius - sphere.cloth_untangle.radius) < 1e-4, "sphere radius")
        for cloth in cloths:
            stored = cloth.cloth_untangle
            h.expect(stored.scene_name == name and stored.settings_json, f"{name}: not stored")
            settings = properties.settings_from_json(stored.settings_json)
            h.expect(abs(settings.thickness - stored.thickness) < 1e-7, "thickness stored")
            h.expect(len(cloth.data.polygons) > 0, "no faces")
            if spacing is not None:
                median = float(np.median(edge_lengths(cloth)))
                h.expect(abs(median - spacing) < 0.05 * spacing, f"{name}: spacing {median}")
    tangled = add("tangled-start")['CLOTH'][0]
    h.expect(len(h.object_pairs(tangled)) > 0, "the tangled start does not intersect itself")


def test_run_scene_step_writes_meshes_and_takes_switches():
    cloths = add("dropped-cloth")['CLOTH']
    context = bpy.context
    props = context.scene.cloth_untangle
    world = operators.live_world(context, cloths)
    start = h.world_positions(cloths[0], evaluated=False)
    stats = operators.scene_step(context.scene, world, cloths)
    moved = h.world_positions(cloths[0], evaluated=False)
    h.expect(np.allclose(moved, world.positions(0), atol=1e-6), "mesh does not show the world")
    h.expect(not np.allclose(moved, start), "the cloth did not move (gravity)")
    h.expect(props.stat_pairs == stats["pairs"] and props.stat_frame == stats["frame"], "stats")
    props.untangle = False
    props.method = 'ye'
    props.response_strength = 2.5
    operators.scene_step(context.scene, world, cloths)
    live = world.scene_settings()
    h.expect((live.untangle, live.method, live.response_strength) == (False, 'ye', 2.5),
             f"switches not taken: {live}")
    h.expect(abs(live.thickness - cloths[0].cloth_untangle.thickness) < 1e-7,
             "the scene's own thickness must stay")
    props.untangle, props.method, props.response_strength = True, 'icm', 1.0
    # The step is the same world across calls: a second session continues, not restarts.
    h.expect(operators.live_world(context, cloths) is world, "live world not kept")


def test_bake_scene_tangled_start_reaches_zero():
    cloth = add("tangled-start")['CLOTH'][0]
    props = bpy.context.scene.cloth_untangle
    props.scene_frames = 12
    folder = h.temporary_folder("cloth_untangle_scene_")
    h.select_only([cloth])
    h.expect(bpy.ops.cloth_untangle.bake_scene(directory=folder) == {'FINISHED'}, "bake scene")
    cache = cloth.modifiers[-1]
    h.expect(cache.type == 'MESH_CACHE' and cache.frame_start == bpy.context.scene.frame_start,
             "no Mesh Cache playing the bake")
    path = bpy.path.abspath(cache.filepath)
    h.expect(os.path.dirname(path) == folder, f"cache written to {path}, not {folder}")
    header, data = h.read_pc2(path)
    h.expect(header["frames"] == 12 and header["vertices"] == 2500, header)
    frames = data.reshape(12, 2500, 3).astype(np.float64)
    faces = h.polygons(cloth)
    first, last = len(h.overlap_pairs(frames[0], faces)), len(h.overlap_pairs(frames[-1], faces))
    h.expect(first > 0 and last == 0, f"Blender overlap: {first} pairs at the start, {last} at the end")
    h.expect(bpy.context.scene.frame_end >= bpy.context.scene.frame_start + 11, "frame range")


def test_show_intersections_selects_what_blender_finds():
    cloth = add("tangled-start")['CLOTH'][0]
    h.select_only([cloth])
    h.expect(bpy.ops.cloth_untangle.show_intersections() == {'FINISHED'}, "show failed")
    h.expect(bpy.context.mode == 'EDIT_MESH', bpy.context.mode)
    bpy.ops.object.mode_set(mode='OBJECT')
    selected = np.zeros(len(cloth.data.polygons), dtype=bool)
    cloth.data.polygons.foreach_get("select", selected)
    expected = {face for pair in h.object_pairs(cloth) for face in pair}
    h.expect(set(np.flatnonzero(selected).tolist()) == expected,
             f"selected {int(selected.sum())} faces, Blender's overlap finds {len(expected)}")
    h.expect(bpy.context.scene.cloth_untangle.stat_pairs > 0, "stats not updated")


def test_show_intersections_failing_in_edit_mode_stays_in_edit_mode():
    h.empty_scene()
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=4, y_subdivisions=4)
    grid = bpy.context.active_object
    grid.data.vertices[0].co = (float("nan"), 0.0, 0.0)
    bpy.ops.object.mode_set(mode='EDIT')
    h.expect_error(bpy.ops.cloth_untangle.show_intersections, grid.name, "non-finite")
    h.expect(bpy.context.mode == 'EDIT_MESH', f"left in {bpy.context.mode}")
    bpy.ops.object.mode_set(mode='OBJECT')


def test_a_running_scene_starts_from_the_meshes_and_refuses_a_duplicated_cloth():
    cloths = add("dropped-cloth")['CLOTH']
    context = bpy.context
    world = operators.live_world(context, cloths)
    operators.scene_step(context.scene, world, cloths)
    # Moved by the user between two runs (as an edit or an Undo would): the next run starts there.
    lifted = h.world_positions(cloths[0], evaluated=False) + np.array([0.0, 0.0, 1.0])
    cloths[0].data.vertices.foreach_set("co", lifted.astype(np.float32).ravel())
    h.expect(operators.live_world(context, cloths) is world, "the live world was not kept")
    h.expect(np.allclose(world.positions(0), lifted, atol=1e-5), "the world ignored the edit")
    # A duplicated cloth is a second object of piece 0: refused with a readable message.
    twin = cloths[0].copy()
    twin.data = cloths[0].data.copy()
    context.scene.collection.objects.link(twin)
    group = operators.scene_cloths(context, cloths[0])
    h.expect(len(group) == 2, f"{len(group)} cloths in the group")
    try:
        operators.live_world(context, group)
    except operators.AddonError as error:
        h.expect("duplicated" in str(error), str(error))
    else:
        raise AssertionError("a duplicated cloth must be refused")
    h.select_only([cloths[0]])
    context.view_layer.objects.active = cloths[0]
    folder = h.temporary_folder("cloth_untangle_scene_")
    h.expect_error(lambda: bpy.ops.cloth_untangle.bake_scene(directory=folder), "duplicated")


def test_a_running_scene_refuses_a_second_run_and_a_bake():
    cloths = add("two-sheets")['CLOTH']
    h.select_only([cloths[0]])
    bpy.context.view_layer.objects.active = cloths[0]
    h.expect(bpy.ops.cloth_untangle.run_scene.poll(), "Run Scene refused on an idle scene")
    group = cloths[0].cloth_untangle.scene_group
    operators._running_scenes.add(group)  # what Run Scene's invoke does (it needs a window)
    try:
        h.expect(not bpy.ops.cloth_untangle.run_scene.poll(), "a second Run Scene was allowed")
        h.expect(not bpy.ops.cloth_untangle.bake_scene.poll(), "Bake Scene was allowed")
    finally:
        operators._running_scenes.discard(group)
    h.expect(bpy.ops.cloth_untangle.bake_scene.poll(), "Bake Scene refused once stopped")


def test_a_relative_cache_folder_needs_a_saved_file():
    cloths = add("two-sheets")['CLOTH']
    h.expect(not bpy.data.filepath, "the test file must be unsaved")
    h.select_only([cloths[0]])
    bpy.context.view_layer.objects.active = cloths[0]
    h.expect_error(lambda: bpy.ops.cloth_untangle.bake_scene(directory="//caches/"),
                   "//caches/", "not saved")


h.run([test_the_menus_list_the_librarys_methods_and_scenes,
       test_add_scene_builds_the_three_scenes,
       test_run_scene_step_writes_meshes_and_takes_switches,
       test_a_running_scene_starts_from_the_meshes_and_refuses_a_duplicated_cloth,
       test_a_relative_cache_folder_needs_a_saved_file,
       test_a_running_scene_refuses_a_second_run_and_a_bake,
       test_show_intersections_failing_in_edit_mode_stays_in_edit_mode,
       test_bake_scene_tangled_start_reaches_zero,
       test_show_intersections_selects_what_blender_finds])
