"""Tangled cloth made by Blender's own cloth solver, with self-collision off.

    blender -b --factory-startup --python bench/make_blender_tangles.py -- OUTDIR
        [--frames N] [--cases sphere,two_sheets,tube,sphere_10k | --cases hard] [--trace]

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

The hard cases (issue 19; `--cases hard` makes all of them, run by bench/run_hard_tangles.py).
Each one also comes triangulated, as CASE_tri: every quad split into two triangles along
alternating diagonals (a checkerboard) *before* the cloth is simulated, so the triangle edges
are the mesh's own edges (the strain over them counts), and the cloth is simulated on the
triangle mesh (so its shape differs from the quad case's):
  sphere_100      the same scene and frames as sphere_10k (the same files under this name)
  sphere_100_tri  triangulated; CASE.obj is frame 22 as in sphere_100, but CASE.pc2 holds 120
                  frames (the 10,000-vertex triangulated cache of the bake acceptance)
  tube_open       an open tube (no caps) of 256 x 117 = 29,952 vertices, 59,392 triangles (a
                  64-segment cylinder of 29 rows, each quad cut 4 x 4, the new vertices on the
                  circle) lying on its side, falling over a sphere and collapsing onto the
                  ground, its upper wall through its lower one; written at three frames of the
                  collapse as tube_open_a/b/c.obj (early, middle, late), and tube_open_c.pc2 with
                  every frame up to c
  garment         two layers of a garment: two nested open tubes (radius 0.30 and 0.32, 64 x 50
                  each, 6,400 vertices, one `o` each), lying on their side, falling onto a
                  sphere and the ground; the outer layer is limp, the inner one stiff in
                  bending, so the outer layer sags through the inner one
--trace prints Blender's pair count at every frame (to choose the frames).
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


def triangulated(faces, columns):
    """Quads split along alternating diagonals, a checkerboard over (column, row) of a grid or
    tube whose faces are listed row by row, `columns` to a row."""
    out = []
    for k, (a, b, c, d) in enumerate(faces):
        i, j = k % columns, k // columns
        if (i + j) % 2 == 0:
            out += [(a, b, c), (a, c, d)]
        else:
            out += [(a, b, d), (b, c, d)]
    return out


def lying_tube(around, rings, radius, length):
    """An open tube along x (lying on its side), its seam at the bottom."""
    vertices, faces = tube(around, rings, radius, length)
    # (x, y, z) of the upright tube -> axis along x, centred: x' = z - length / 2, z' = -x.
    return [(z - length / 2, y, -x) for x, y, z in vertices], faces


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
    tri = name.endswith("_tri")
    base = name[:-4] if tri else name
    if base == "sphere_100":
        n = 100
        vertices, faces = grid(n, n, 2.4, 2.4)
        faces = triangulated(faces, n - 1) if tri else faces
        cloth = add_mesh("cloth", vertices, faces,
                         Matrix.Translation((0.35, 0.2, 0.9)) @ Matrix.Rotation(0.25, 4, "Z"))
        add_sphere((0, 0, 0), 0.45)
        add_ground(-0.45)
        add_cloth(cloth, frames, bending=0.05)
        return [cloth]
    if base == "tube_open":
        around = 256
        vertices, faces = lying_tube(around, 117, 0.5, 2.0)
        faces = triangulated(faces, around) if tri else faces
        cloth = add_mesh("tube_open", vertices, faces,
                         Matrix.Translation((0.15, 0.1, 1.05)) @ Matrix.Rotation(0.3, 4, "Z"))
        add_sphere((0, 0, 0), 0.45)
        add_ground(-0.45)
        add_cloth(cloth, frames, bending=0.05)
        return [cloth]
    if base == "garment":
        around = 64
        objects = []
        for label, radius, bending in (("inner", 0.30, 5.0), ("outer", 0.32, 0.01)):
            vertices, faces = lying_tube(around, 50, radius, 1.4)
            faces = triangulated(faces, around) if tri else faces
            obj = add_mesh(label, vertices, faces,
                           Matrix.Translation((0.1, 0.05, 0.85)) @ Matrix.Rotation(0.2, 4, "Z"))
            add_cloth(obj, frames, bending=bending)
            objects.append(obj)
        add_sphere((0, 0, 0), 0.4)
        add_ground(-0.4)
        return objects
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


HARD_CASES = ["sphere_100", "sphere_100_tri", "tube_open", "tube_open_tri", "garment",
              "garment_tri"]
# Frames simulated, per case.
DEFAULT_FRAMES = {"sphere": 22, "two_sheets": 13, "tube": 11, "sphere_10k": 22,
                  "sphere_100": 22, "sphere_100_tri": 120, "tube_open": 28, "tube_open_tri": 28,
                  "garment": 12, "garment_tri": 12}
# The OBJ files a case writes, (name, frame); unlisted cases write CASE.obj at the last frame.
SNAPSHOTS = {
    "sphere_100_tri": [("sphere_100_tri", 22)],
    "tube_open": [("tube_open_a", 16), ("tube_open_b", 21), ("tube_open_c", 28)],
    "tube_open_tri": [("tube_open_a_tri", 16), ("tube_open_b_tri", 21), ("tube_open_c_tri", 28)],
}
# The PC2 file of a case (every simulated frame), named after one of its OBJ files.
CACHE_NAME = {"tube_open": "tube_open_c", "tube_open_tri": "tube_open_c_tri"}


def main():
    args = script_arguments()
    if not args or args[0].startswith("-"):
        print(__doc__)
        sys.exit(1)
    out_dir, frames, cases, trace = args[0], None, list(DEFAULT_FRAMES)[:4], False
    i = 1
    while i < len(args):
        if args[i] == "--frames":
            frames = int(args[i + 1])
        elif args[i] == "--cases":
            cases = HARD_CASES if args[i + 1] == "hard" else args[i + 1].split(",")
        elif args[i] == "--trace":
            trace = True
            i += 1
            continue
        else:
            raise SystemExit(f"unknown option {args[i]}")
        i += 2
    os.makedirs(out_dir, exist_ok=True)
    print(f"{'case':<12} {'vertices':>8} {'frames':>6} {'sim s':>7} {'pairs (last frame)':>18}")
    for name in cases:
        count = frames or DEFAULT_FRAMES.get(name, 30)
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
            if trace:
                print(f"  {name} frame {frame}: {overlap_pairs(cache[-1], all_faces)} pairs "
                      f"({time.perf_counter() - start:.1f} s)", flush=True)
        seconds = time.perf_counter() - start
        snapshots = SNAPSHOTS.get(name, [(name, count)]) if frames is None else [(name, count)]
        for out_name, frame in snapshots:
            write_obj(os.path.join(out_dir, out_name + ".obj"), objects, cache[frame - 1],
                      faces_per_object)
        write_pc2(os.path.join(out_dir, CACHE_NAME.get(name, name) + ".pc2"), cache)
        for out_name, frame in snapshots:
            pairs = overlap_pairs(cache[frame - 1], all_faces)
            if out_name == name and frame == count:
                print(f"{name:<12} {len(cache[-1]):>8} {count:>6} {seconds:>7.1f} {pairs:>18}")
            else:
                print(f"{out_name:<12} {len(cache[-1]):>8} {frame:>6} {seconds:>7.1f} {pairs:>18}"
                      f"  (of {count} frames simulated)", flush=True)


if __name__ == "__main__":
    main()
