"""The package installs from the zip, registers, unregisters without leaving anything behind,
and registers again; its metadata serves both Blender 3.x (bl_info) and 4.2+ (manifest); the
operators refuse to run without a selection and say why; PC2 and overlay helpers are correct
against hand-built data. None of this needs the library to be loaded."""

import os
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import addon_harness as h  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

package, scripts = h.install()
OPERATORS = ("untangle_selected", "bake_cache", "add_scene", "run_scene", "bake_scene",
             "show_intersections")
PANELS = ("VIEW3D_PT_cloth_untangle", "PHYSICS_PT_cloth_untangle")


def registered():
    """What the add-on adds to Blender, as seen from outside the add-on."""
    import cloth_untangle.overlay as overlay
    menu_functions = [f.__module__ for f in bpy.types.VIEW3D_MT_object._dyn_ui_initialize()]
    return {
        "scene_props": hasattr(bpy.types.Scene, "cloth_untangle"),
        "object_props": hasattr(bpy.types.Object, "cloth_untangle"),
        "operators": [name for name in OPERATORS
                      if hasattr(bpy.types, "CLOTH_UNTANGLE_OT_" + name)],
        "panels": [name for name in PANELS if hasattr(bpy.types, name)],
        "menu": hasattr(bpy.types, "VIEW3D_MT_cloth_untangle"),
        "menu_entry": any(m.startswith("cloth_untangle") for m in menu_functions),
        "draw_handler": overlay.handler_installed(),
    }


def test_registered_everything():
    state = registered()
    expect_all = {"scene_props": True, "object_props": True, "operators": list(OPERATORS),
                  "panels": list(PANELS), "menu": True, "menu_entry": True,
                  "draw_handler": True}
    h.expect(state == expect_all, f"after enabling: {state}")
    for name in OPERATORS:
        operator = getattr(bpy.types, "CLOTH_UNTANGLE_OT_" + name)
        h.expect(operator.bl_idname == "cloth_untangle." + name, operator.bl_idname)
        h.expect({'REGISTER', 'UNDO'} <= set(operator.bl_options), f"{name}: {operator.bl_options}")


def test_unregister_leaves_nothing_and_registers_again():
    import cloth_untangle.overlay as overlay
    bpy.ops.preferences.addon_disable(module=h.MODULE)
    state = registered()
    h.expect(state == {"scene_props": False, "object_props": False, "operators": [],
                       "panels": [], "menu": False, "menu_entry": False,
                       "draw_handler": False}, f"after disabling: {state}")
    h.expect(overlay.handler_installed() is False, "draw handler left behind")
    bpy.ops.preferences.addon_enable(module=h.MODULE)
    h.expect(registered()["operators"] == list(OPERATORS), "second register incomplete")
    bpy.context.scene.cloth_untangle.method = 'ye'  # the property group works again
    h.expect(bpy.context.scene.cloth_untangle.method == 'ye', "property group broken")


def test_metadata_for_both_generations():
    h.expect(package.bl_info["blender"] == (3, 4, 0), package.bl_info)
    manifest_path = os.path.join(os.path.dirname(package.__file__), "blender_manifest.toml")
    with open(manifest_path, "rb") as stream:
        manifest = tomllib.load(stream)
    for key in ("schema_version", "id", "version", "name", "tagline", "maintainer", "type",
                "blender_version_min", "license", "platforms"):
        h.expect(key in manifest, f"manifest lacks {key}")
    h.expect(manifest["id"] == h.MODULE and manifest["type"] == "add-on", manifest)
    h.expect(manifest["version"] == ".".join(map(str, package.bl_info["version"])),
             "bl_info and manifest versions differ")
    # Extensions are imported under another package name: only relative imports work there.
    folder = os.path.dirname(package.__file__)
    for name in os.listdir(folder):
        if name.endswith(".py"):
            with open(os.path.join(folder, name)) as stream:
                text = stream.read()
            h.expect("import cloth_untangle" not in text and "from cloth_untangle" not in text,
                     f"{name} imports its own package absolutely")


def test_poll_explains_without_selection():
    h.empty_scene()
    for name, reason in (("untangle_selected", "Select one or more mesh objects"),
                         ("bake_cache", "Select one or more mesh objects"),
                         ("show_intersections", "Select one or more mesh objects"),
                         ("run_scene", "Add Scene first"),
                         ("bake_scene", "Add Scene first")):
        operator = getattr(bpy.ops.cloth_untangle, name)
        h.expect(operator.poll() is False, f"{name} poll should be false")
        try:
            operator()
        except RuntimeError as error:
            h.expect(reason in str(error), f"{name}: {error}")
        else:
            raise AssertionError(f"{name} ran without a selection")
    # A selected camera is not a mesh either.
    camera = bpy.data.objects.new("Camera", bpy.data.cameras.new("Camera"))
    bpy.context.collection.objects.link(camera)
    h.select_only([camera])
    h.expect(bpy.ops.cloth_untangle.untangle_selected.poll() is False, "camera accepted")


def test_pc2_round_trip_and_header():
    import cloth_untangle.pc2 as pc2
    rng = np.random.default_rng(3)
    frames = rng.normal(size=(5, 7, 3)).astype(np.float32)
    path = os.path.join(h.temporary_folder(), "x.pc2")
    pc2.write(path, frames, start=12)
    header, data = h.read_pc2(path)
    h.expect(header == {"signature": b"POINTCACHE2\0", "version": 1, "vertices": 7,
                        "start": 12.0, "sampling": 1.0, "frames": 5}, header)
    h.expect(os.path.getsize(path) == 32 + 5 * 7 * 3 * 4, "file size")
    h.expect(np.array_equal(data.reshape(5, 7, 3), frames), "payload differs")
    read_header, read_frames = pc2.read(path)
    h.expect(read_header["frames"] == 5 and np.array_equal(read_frames, frames), "read back")
    with open(path, "r+b") as stream:
        stream.truncate(40)
    try:
        pc2.read(path)
    except pc2.Pc2Error as error:
        h.expect("promises 5 frames" in str(error), str(error))
    else:
        raise AssertionError("a truncated PC2 was accepted")
    frames[2, 3, 1] = np.nan
    try:
        pc2.write(path, frames)
    except pc2.Pc2Error:
        pass
    else:
        raise AssertionError("NaN written to a cache")


def test_overlay_geometry():
    import cloth_untangle.overlay as overlay
    # A closed triangle loop and an open 3-point path: 3 + 2 segments.
    points = np.arange(18, dtype=np.float32).reshape(6, 3)
    _, lines = overlay.contour_lines(points, [0, 3, 6], [0, 1])
    h.expect(sorted(map(tuple, lines.tolist())) == [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5)],
             lines.tolist())
    corners, edges = overlay.box_lines(np.array([[[0, 0, 0], [1, 2, 3]]], dtype=np.float32))
    h.expect(len(corners) == 8 and len(edges) == 12, "box line counts")
    lengths = sorted(np.linalg.norm(corners[edges[:, 0]] - corners[edges[:, 1]], axis=1))
    h.expect(np.allclose(lengths, [1] * 4 + [2] * 4 + [3] * 4), f"box edges {lengths}")
    # In the background the handler draws nothing (no GPU): the call must be harmless.
    overlay.set_contours(points, [0, 3, 6], [0, 1])
    overlay.draw()
    overlay.clear()


h.run([test_registered_everything, test_unregister_leaves_nothing_and_registers_again,
       test_metadata_for_both_generations, test_poll_explains_without_selection,
       test_pc2_round_trip_and_header, test_overlay_geometry])
