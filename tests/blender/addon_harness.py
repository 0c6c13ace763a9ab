"""Shared set-up for the headless Blender tests of the add-on.

Run as: blender -b --factory-startup --python-exit-code 1 --python test_x.py -- --zip ZIP
The built zip is installed into a temporary user scripts folder (BLENDER_USER_SCRIPTS, read
by Blender when it resolves the user path), so the real user configuration is never touched.
Pairs are counted with Blender's own BVHTree.overlap: an independent check of the library.
"""

import argparse
import atexit
import os
import shutil
import sys
import tempfile
import traceback

import bpy
import numpy as np
from mathutils.bvhtree import BVHTree

MODULE = "cloth_untangle"


def arguments():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    parser = argparse.ArgumentParser()
    parser.add_argument("--zip", required=True, help="the built cloth_untangle.zip")
    return parser.parse_args(argv)


def temporary_folder(prefix="cloth_untangle_"):
    """A new empty folder, removed when Blender exits (a test must not leave files behind)."""
    folder = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def install(zip_path=None):
    """Installs and enables the zip in a fresh temporary user scripts folder; returns the
    add-on's package module and the folder."""
    zip_path = zip_path or arguments().zip
    if not os.path.isfile(zip_path):
        raise FileNotFoundError(f"add-on zip not found: {zip_path}")
    folder = temporary_folder("cloth_untangle_scripts_")
    os.environ["BLENDER_USER_SCRIPTS"] = folder
    bpy.ops.preferences.addon_install(filepath=zip_path, overwrite=True)
    installed = os.path.join(folder, "addons", MODULE)
    if not os.path.isdir(installed):
        raise RuntimeError(f"addon_install did not install into {folder}")
    bpy.ops.preferences.addon_enable(module=MODULE)
    package = sys.modules[MODULE]
    if not os.path.abspath(package.__file__).startswith(os.path.abspath(installed)):
        raise RuntimeError(f"enabled {package.__file__}, not the installed copy in {installed}")
    return package, folder


def run(tests):
    """Runs the test functions in order; any failure makes Blender exit with code 1."""
    failed = []
    for test in tests:
        print(f"[ RUN      ] {test.__name__}", flush=True)
        try:
            test()
        except Exception:
            traceback.print_exc()
            failed.append(test.__name__)
            print(f"[  FAILED  ] {test.__name__}", flush=True)
        else:
            print(f"[       OK ] {test.__name__}", flush=True)
    print(f"{len(tests) - len(failed)} of {len(tests)} tests passed", flush=True)
    if failed:
        print(f"failed: {', '.join(failed)}", flush=True)
    if failed or not bpy.app.background:
        # A windowed Blender stays open after the script: leave with the result as exit code.
        sys.exit(1 if failed else 0)


def empty_scene():
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    for mesh in list(bpy.data.meshes):
        bpy.data.meshes.remove(mesh)
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, 250
    scene.frame_set(1)


def select_only(objects):
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = objects[0] if objects else None


def world_positions(obj, evaluated=True):
    """(n, 3) float64 vertex positions in world space (after the modifiers when evaluated)."""
    if evaluated:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        source = obj.evaluated_get(depsgraph)
        mesh = source.to_mesh()
    else:
        source, mesh = obj, obj.data
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    matrix = np.array(source.matrix_world)
    if evaluated:
        source.to_mesh_clear()
    co = co.reshape(-1, 3).astype(np.float64)
    return co @ matrix[:3, :3].T + matrix[:3, 3]


def polygons(obj):
    return [tuple(polygon.vertices) for polygon in obj.data.polygons]


def overlap_pairs(positions, faces, other_positions=None, other_faces=None):
    """Intersecting face pairs by Blender's BVHTree.overlap: within one mesh (pairs sharing a
    vertex excluded, each unordered pair once) or between two meshes."""
    tree = BVHTree.FromPolygons([tuple(p) for p in positions.tolist()], faces, epsilon=0.0)
    if other_positions is None:
        pairs = set()
        for a, b in tree.overlap(tree):
            if a != b and not set(faces[a]) & set(faces[b]):
                pairs.add((min(a, b), max(a, b)))
        return pairs
    other = BVHTree.FromPolygons([tuple(p) for p in other_positions.tolist()], other_faces,
                                 epsilon=0.0)
    return set(tree.overlap(other))


def object_pairs(obj, evaluated=True):
    return overlap_pairs(world_positions(obj, evaluated), polygons(obj))


def tangled_cloth(frames=24, subdivisions=24, name="Tangled"):
    """A grid dropped by Blender's own cloth solver (self-collision off) over a sphere until its
    folds cut through each other. Returns the cloth object at the last frame."""
    bpy.ops.mesh.primitive_grid_add(x_subdivisions=subdivisions, y_subdivisions=subdivisions,
                                    size=2.0, location=(0.0, 0.0, 1.0))
    cloth = bpy.context.active_object
    cloth.name = name
    bpy.ops.mesh.primitive_uv_sphere_add(radius=0.35, location=(0.0, 0.0, 0.4), segments=16,
                                         ring_count=8)
    sphere = bpy.context.active_object
    sphere.name = name + " Collider"
    sphere.modifiers.new("Collision", 'COLLISION')
    modifier = cloth.modifiers.new("Cloth", 'CLOTH')
    modifier.settings.quality = 5
    modifier.collision_settings.use_collision = True
    modifier.collision_settings.use_self_collision = False
    modifier.point_cache.frame_start = 1
    modifier.point_cache.frame_end = 250
    for frame in range(1, frames + 1):
        bpy.context.scene.frame_set(frame)
    return cloth, sphere


def read_pc2(path):
    """Independent PC2 reader (struct + numpy), not the add-on's."""
    import struct
    with open(path, "rb") as stream:
        header = stream.read(32)
        signature, version, vertices, start, sampling, count = struct.unpack("<12siiffi", header)
        data = np.frombuffer(stream.read(), dtype="<f4")
    return ({"signature": signature, "version": version, "vertices": vertices, "start": start,
             "sampling": sampling, "frames": count}, data)


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def expect_error(call, *fragments):
    """The call fails with one readable error report naming every fragment; returns the text."""
    try:
        call()
    except RuntimeError as error:
        text = str(error)
    else:
        raise AssertionError("expected the operator to fail with an error report")
    expect(text.count("Error:") == 1, f"expected exactly one error report, got: {text!r}")
    for fragment in fragments:
        expect(fragment in text, f"error report {text!r} does not mention {fragment!r}")
    return text
