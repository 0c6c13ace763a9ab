"""Tangled cloth made by Blender's own cloth solver, with self-collision off.

    blender -b --factory-startup --python bench/make_blender_tangles.py -- OUTDIR
        [--frames N] [--cases sphere,two_sheets,tube,sphere_10k]

Each case runs for its own number of frames (--frames overrides it for all): up to the moment
when its first folds have passed through each other, a few hundred to a few thousand pairs.
Run longer, the cloth ends as a pile in which nearly every triangle cuts several others; that
is no longer a tangle to repair but a different shape.

Each case is simulated with the Cloth modifier (self-collision off, so the cloth passes through
itself), and written as OUTDIR/CASE.obj (the last, most tangled frame; one `o` per object) and
OUTDIR/CASE.pc2 (every simulated frame, all objects' vertices in the OBJ's order, world space).
Blender's own ``BVHTree.overlap`` counts the intersecting triangle pairs of the last frame.

Cases:
  sphere      a 60 x 60 cloth dropped off-centre onto a sphere; its hanging sides fold through
              each other on the ground (22 frames)
  two_sheets  two 40 x 40 sheets, the upper one turned by 45 degrees, falling onto one sphere:
              the upper one falls through the lower one's edges (13 frames)
  tube        an open tube (32 x 40) standing on the ground, collapsing into itself (11 frames)
  sphere_10k  the sphere case at 100 x 100 = 10,000 vertices (for `untangle bake` timings)
"""

import math
import os
import struct
import sys
import time

import bpy
from mathutils import Matrix
from mathutils.bvhtree import BVHTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_script import script_arguments  # noqa: E402


def clear_scene():
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.gravity = (0.0, 0.0, -9.81)
    return scene


def add_mesh(name, vertices, faces, matrix=None):
    mesh = bpy.data.meshes.new(name)
    mesh.from_pydata(vertices, [], faces)
    mesh.update()
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.scene.collection.objects.link(obj)
    if matrix is not None:
        obj.matrix_world = matrix
    return obj


def grid(columns, rows, size_x, size_y):
    vertices = [(-size_x / 2 + size_x * i / (columns - 1), -size_y / 2 + size_y * j / (rows - 1), 0.0)
                for j in range(rows) for i in range(columns)]
    faces = [(j * columns + i, j * columns + i + 1, (j + 1) * columns + i + 1, (j + 1) * columns + i)
             for j in range(rows - 1) for i in range(columns - 1)]
    return vertices, faces


def tube(around, rings, radius, height):
    vertices = [(radius * math.cos(2 * math.pi * i / around), radius * math.sin(2 * math.pi * i / around),
                 height * j / (rings - 1)) for j in range(rings) for i in range(around)]
    faces = [(j * around + i, j * around + (i + 1) % around, (j + 1) * around + (i + 1) % around,
              (j + 1) * around + i) for j in range(rings - 1) for i in range(around)]
    return vertices, faces


def add_collider(obj):
    obj.modifiers.new("Collision", "COLLISION")
    obj.collision.thickness_outer = 0.01
    obj.collision.cloth_friction = 5.0


def add_sphere(location, radius):
    bpy.ops.mesh.primitive_uv_sphere_add(segments=32, ring_count=16, radius=radius, location=location)
    sphere = bpy.context.active_object
    add_collider(sphere)
    return sphere


def add_ground(height):
    bpy.ops.mesh.primitive_plane_add(size=20, location=(0, 0, height))
    add_collider(bpy.context.active_object)


def add_cloth(obj, frames, bending=0.5):
    cloth = obj.modifiers.new("Cloth", "CLOTH")
    # Stiff in stretch and compression: with the defaults the cloth squeezes edges to a hundredth
    # of their length against the sphere, and a strain against such an edge means nothing.
    cloth.settings.quality = 10
    cloth.settings.tension_stiffness = 80
    cloth.settings.compression_stiffness = 80
    cloth.settings.mass = 0.3
    cloth.settings.bending_stiffness = bending
    cloth.collision_settings.use_collision = True
    cloth.collision_settings.use_self_collision = False
    cloth.point_cache.frame_start = 1
    cloth.point_cache.frame_end = frames
    return cloth


def build_case(name, frames):
    """The cloth objects of a case, in the order their vertices are written."""
    if name in ("sphere", "sphere_10k"):
        n = 100 if name == "sphere_10k" else 60
        vertices, faces = grid(n, n, 2.4, 2.4)
        cloth = add_mesh("cloth", vertices, faces,
                         Matrix.Translation((0.35, 0.2, 0.9)) @ Matrix.Rotation(0.25, 4, "Z"))
        add_sphere((0, 0, 0), 0.45)
        add_ground(-0.45)
        add_cloth(cloth, frames, bending=0.05)
        return [cloth]
    if name == "two_sheets":
        vertices, faces = grid(40, 40, 1.6, 1.6)
        lower = add_mesh("lower", vertices, faces, Matrix.Translation((0.1, 0.0, 0.7)))
        upper = add_mesh("upper", vertices, faces,
                         Matrix.Translation((-0.05, 0.1, 0.8)) @ Matrix.Rotation(math.pi / 4, 4, "Z"))
        add_sphere((0, 0, 0), 0.4)
        add_ground(-0.4)
        add_cloth(lower, frames, bending=0.05)
        add_cloth(upper, frames, bending=0.05)
        return [lower, upper]
    if name == "tube":
        vertices, faces = tube(32, 40, 0.35, 1.6)
        cloth = add_mesh("tube", vertices, faces, Matrix.Translation((0, 0, 0.01)))
        add_ground(0.0)
        add_cloth(cloth, frames, bending=0.01)
        return [cloth]
    raise SystemExit(f"unknown case {name}")


def evaluated_positions(objects):
    depsgraph = bpy.context.evaluated_depsgraph_get()
    out = []
    for obj in objects:
        evaluated = obj.evaluated_get(depsgraph)
        mesh = evaluated.to_mesh()
        matrix = evaluated.matrix_world
        out.extend(tuple(matrix @ v.co) for v in mesh.vertices)
        evaluated.to_mesh_clear()
    return out


def topology(objects):
    faces, offset = [], 0
    for obj in objects:
        faces.append([tuple(offset + i for i in p.vertices) for p in obj.data.polygons])
        offset += len(obj.data.vertices)
    return faces


def write_obj(path, objects, positions, faces_per_object):
    with open(path, "w") as f:
        f.write("# made by bench/make_blender_tangles.py\n")
        for x, y, z in positions:
            f.write(f"v {x:.7f} {y:.7f} {z:.7f}\n")
        for obj, faces in zip(objects, faces_per_object):
            f.write(f"o {obj.name}\n")
            for face in faces:
                f.write("f " + " ".join(str(i + 1) for i in face) + "\n")


def write_pc2(path, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<12siiffi", b"POINTCACHE2\0", 1, len(frames[0]), 1.0, 1.0, len(frames)))
        for frame in frames:
            f.write(struct.pack(f"<{3 * len(frame)}f", *[c for p in frame for c in p]))


def overlap_pairs(positions, faces):
    """Blender's count: unordered triangle pairs that intersect and share no vertex."""
    triangles = [(face[0], face[i], face[i + 1]) for face in faces for i in range(1, len(face) - 1)]
    tree = BVHTree.FromPolygons(positions, triangles, all_triangles=True)
    pairs = set()
    for a, b in tree.overlap(tree):
        if a != b and not set(triangles[a]) & set(triangles[b]):
            pairs.add((min(a, b), max(a, b)))
    return len(pairs)


def main():
    args = script_arguments()
    if not args or args[0].startswith("-"):
        print(__doc__)
        sys.exit(1)
    default_frames = {"sphere": 22, "two_sheets": 13, "tube": 11, "sphere_10k": 22}
    out_dir, frames, cases = args[0], None, list(default_frames)
    i = 1
    while i < len(args):
        if args[i] == "--frames":
            frames = int(args[i + 1])
        elif args[i] == "--cases":
            cases = args[i + 1].split(",")
        else:
            raise SystemExit(f"unknown option {args[i]}")
        i += 2
    os.makedirs(out_dir, exist_ok=True)
    print(f"{'case':<12} {'vertices':>8} {'frames':>6} {'sim s':>7} {'pairs (last frame)':>18}")
    for name in cases:
        count = frames or default_frames.get(name, 30)
        scene = clear_scene()
        scene.frame_start, scene.frame_end = 1, count
        objects = build_case(name, count)
        faces_per_object = topology(objects)
        all_faces = [face for faces in faces_per_object for face in faces]
        cache = []
        start = time.perf_counter()
        for frame in range(1, count + 1):
            scene.frame_set(frame)
            cache.append(evaluated_positions(objects))
        seconds = time.perf_counter() - start
        write_obj(os.path.join(out_dir, name + ".obj"), objects, cache[-1], faces_per_object)
        write_pc2(os.path.join(out_dir, name + ".pc2"), cache)
        pairs = overlap_pairs(cache[-1], all_faces)
        print(f"{name:<12} {len(cache[-1]):>8} {count:>6} {seconds:>7.1f} {pairs:>18}")


if __name__ == "__main__":
    main()
