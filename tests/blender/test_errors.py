"""Every failure is one readable error report and leaves the scene as it was: a library that
fails to load (a bad CLOTH_UNTANGLE_LIB and no library in lib/), NaN coordinates, a modifier
that changes the topology, a mesh without faces, an invalid face the library rejects, a bake
with nowhere to write."""

import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import addon_harness as h  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

package, scripts = h.install()
LIBRARY = os.path.join(os.path.dirname(package.__file__), "lib", "libuntangle.so")


def grid(name="Grid", size=2.0):
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=8, y_subdivisions=8, size=size)
    obj = bpy.context.active_object
    obj.name = name
    return obj


def coordinates(obj):
    co = np.empty(len(obj.data.vertices) * 3, dtype=np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co


def scene_state():
    """What an operator could change: objects, their modifiers and flags, shape keys, mesh data."""
    return {obj.name: (coordinates(obj).tobytes(),
                       [(m.name, m.type, m.show_viewport, m.show_render) for m in obj.modifiers],
                       obj.data.shape_keys is not None)
            for obj in bpy.data.objects if obj.type == 'MESH'}


def test_library_that_fails_to_load():
    # Runs first: loader.py caches a library only once it loaded one.
    h.empty_scene()
    bad = os.path.join(h.temporary_folder(), "libuntangle.so")
    with open(bad, "w") as stream:
        stream.write("not a shared library\n")
    hidden = LIBRARY + ".hidden"
    os.environ["CLOTH_UNTANGLE_LIB"] = bad
    shutil.move(LIBRARY, hidden)
    try:
        obj = grid()
        h.select_only([obj])
        state = scene_state()
        for call in (bpy.ops.cloth_untangle.untangle_selected,
                     lambda: bpy.ops.cloth_untangle.bake_cache(directory=h.temporary_folder()),
                     bpy.ops.cloth_untangle.show_intersections,
                     lambda: bpy.ops.cloth_untangle.add_scene(scene='two-sheets')):
            h.expect_error(call, "cannot load libuntangle", bad, LIBRARY)
            h.expect(bpy.context.mode == 'OBJECT', "mode changed")
            h.expect(scene_state() == state, "a failed call changed the scene")
    finally:
        shutil.move(hidden, LIBRARY)
        del os.environ["CLOTH_UNTANGLE_LIB"]
    h.expect(bpy.ops.cloth_untangle.untangle_selected() == {'FINISHED'},
             "the library in lib/ does not load once it is back")


def test_nan_coordinates():
    h.empty_scene()
    obj = grid("Broken")
    co = coordinates(obj).reshape(-1, 3)
    co[17, 1] = np.nan
    obj.data.vertices.foreach_set("co", co.ravel())
    obj.data.update()
    h.select_only([obj])
    state = scene_state()
    h.expect_error(bpy.ops.cloth_untangle.untangle_selected, "'Broken'", "NaN", "vertex 17")
    h.expect(scene_state() == state, "the NaN mesh was changed")


def test_topology_changing_modifier():
    h.empty_scene()
    obj = grid("Subdivided")
    obj.modifiers.new("Subdivision", 'SUBSURF')
    h.select_only([obj])
    state = scene_state()
    h.expect_error(bpy.ops.cloth_untangle.untangle_selected, "'Subdivided'", "topology")
    h.expect_error(lambda: bpy.ops.cloth_untangle.bake_cache(directory=h.temporary_folder()),
                   "'Subdivided'", "topology")
    h.expect(scene_state() == state, "a failed call changed the scene")


def test_mesh_without_faces():
    h.empty_scene()
    mesh = bpy.data.meshes.new("Points")
    mesh.vertices.add(3)
    mesh.vertices.foreach_set("co", np.arange(9, dtype=np.float32))
    obj = bpy.data.objects.new("Points", mesh)
    bpy.context.collection.objects.link(obj)
    h.select_only([obj])
    h.expect_error(bpy.ops.cloth_untangle.untangle_selected, "'Points'", "no faces")


def test_face_the_library_rejects():
    # A triangle using one vertex twice: Blender stores it, the library refuses it by name.
    from cloth_untangle import meshdata
    h.empty_scene()
    positions = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float32)
    mesh = meshdata.new_mesh(bpy.data, "Bad", positions, [3, 3], [0, 1, 2, 1, 3, 3])
    obj = bpy.data.objects.new("Bad", mesh)
    bpy.context.collection.objects.link(obj)
    h.select_only([obj])
    state = scene_state()
    text = h.expect_error(bpy.ops.cloth_untangle.untangle_selected, "face 1")
    h.expect("Traceback" not in text, text)
    h.expect(scene_state() == state, "the rejected mesh was changed")


def test_bake_without_a_place_to_write():
    h.empty_scene()
    obj = grid("Unsaved")
    obj.modifiers.new("Wave", 'WAVE')
    h.select_only([obj])
    h.expect(bpy.data.filepath == "", "this test needs an unsaved file")
    bpy.context.scene.cloth_untangle.cache_directory = ""
    state = scene_state()
    h.expect_error(bpy.ops.cloth_untangle.bake_cache, "Save the .blend file first")
    h.expect(scene_state() == state, "the failed bake changed the scene")


h.run([test_library_that_fails_to_load, test_nan_coordinates, test_topology_changing_modifier,
       test_mesh_without_faces, test_face_the_library_rejects, test_bake_without_a_place_to_write])
