"""Blender's cloth self-collision against `untangle fix` / `untangle bake` on tangled meshes.

    blender -b --factory-startup --python bench/compare_blender_repair.py -- CASE.obj [...]
        [--frames 60] [--no-bake]

For each tangled mesh (e.g. from bench/make_blender_tangles.py):
- Blender: the mesh as one object (all its pieces, so self-collision also sees the pieces
  against each other) with a Cloth modifier, self-collision on, gravity off, started from the
  tangled shape and run for --frames frames; its intersecting pairs at the end and s/frame.
- `untangle fix CASE.obj -o OUT.obj --json`: pairs left and maximum edge strain against the
  input, both measured here (Blender's ``BVHTree.overlap`` and the OBJ edge lengths), not taken
  from our own report; and its seconds.
- `untangle bake CASE.obj CASE.pc2 -o OUT.pc2 --json` when CASE.pc2 exists: per output frame
  Blender's overlap count (all must be 0), the strain against each input frame, and the
  largest per-vertex jump between consecutive frames, out against in (target <= 1.5x); s/frame.

The CLI is found through UNTANGLE_CLI, else build/release/cli/untangle in this repository.
Pairs are unordered triangle pairs (polygons split as fans from their first corner, like the
library) that share no vertex; Blender lists each pair twice and also reports neighbours.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

import bpy
from mathutils.bvhtree import BVHTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_script import fan_triangles, find_cli, read_obj, read_pc2, script_arguments  # noqa: E402


def overlap_pairs(positions, triangles):
    tree = BVHTree.FromPolygons(positions, triangles, all_triangles=True)
    pairs = set()
    for a, b in tree.overlap(tree):
        if a != b and not set(triangles[a]) & set(triangles[b]):
            pairs.add((min(a, b), max(a, b)))
    return len(pairs)


def edges_of(faces):
    edges = set()
    for face in faces:
        for k in range(len(face)):
            a, b = face[k], face[(k + 1) % len(face)]
            edges.add((min(a, b), max(a, b)))
    return sorted(edges)


def distance(p, q):
    return ((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 + (p[2] - q[2]) ** 2) ** 0.5


def max_strain(edges, reference, positions):
    worst = 0.0
    for a, b in edges:
        before = distance(reference[a], reference[b])
        if before > 0:
            worst = max(worst, abs(distance(positions[a], positions[b]) / before - 1))
    return worst


def blender_repair(vertices, faces, triangles, frames):
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    scene.gravity = (0.0, 0.0, 0.0)
    scene.frame_start, scene.frame_end = 1, frames
    mesh = bpy.data.meshes.new("tangled")
    mesh.from_pydata(vertices, [], faces)
    mesh.update()
    obj = bpy.data.objects.new("tangled", mesh)
    scene.collection.objects.link(obj)
    cloth = obj.modifiers.new("Cloth", "CLOTH")
    cloth.settings.quality = 5
    cloth.settings.effector_weights.gravity = 0.0
    cloth.collision_settings.use_collision = False
    cloth.collision_settings.use_self_collision = True
    cloth.point_cache.frame_start = 1
    cloth.point_cache.frame_end = frames
    start = time.perf_counter()
    for frame in range(1, frames + 1):
        scene.frame_set(frame)
    seconds = (time.perf_counter() - start) / frames
    depsgraph = bpy.context.evaluated_depsgraph_get()
    evaluated = obj.evaluated_get(depsgraph)
    result = evaluated.to_mesh()
    positions = [tuple(v.co) for v in result.vertices]
    evaluated.to_mesh_clear()
    return overlap_pairs(positions, triangles), seconds, max_strain(edges_of(faces), vertices,
                                                                    positions)


def run_json(command):
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def ours_fix(cli, path, triangles, edges, vertices, work):
    out_path = os.path.join(work, "fixed.obj")
    report = run_json([cli, "fix", path, "-o", out_path, "--json"])
    fixed, _ = read_obj(out_path)
    return (overlap_pairs(fixed, triangles), max_strain(edges, vertices, fixed),
            report["seconds"], report["iterations"], report["pairs_before"])


def ours_bake(cli, path, pc2_path, triangles, edges, work):
    out_path = os.path.join(work, "baked.pc2")
    report = run_json([cli, "bake", path, pc2_path, "-o", out_path, "--json"])
    frames_in, frames_out = read_pc2(pc2_path), read_pc2(out_path)
    pairs_in = [overlap_pairs(frame, triangles) for frame in frames_in]
    pairs_out = [overlap_pairs(frame, triangles) for frame in frames_out]
    strain = max(max_strain(edges, a, b) for a, b in zip(frames_in, frames_out))
    jump_in = jump_out = 0.0
    for f in range(1, len(frames_out)):
        for v in range(len(frames_out[f])):
            jump_in = max(jump_in, distance(frames_in[f][v], frames_in[f - 1][v]))
            jump_out = max(jump_out, distance(frames_out[f][v], frames_out[f - 1][v]))
    return {
        "frames": len(frames_out),
        "max_pairs_in": max(pairs_in),
        "frames_tangled_in": sum(1 for p in pairs_in if p),
        "max_pairs_out": max(pairs_out),
        "strain": strain,
        "jump_ratio": jump_out / jump_in if jump_in > 0 else 0.0,
        "seconds_per_frame": report["seconds_per_frame"],
    }


def main():
    args = script_arguments()
    frames, bake, paths = 60, True, []
    i = 0
    while i < len(args):
        if args[i] == "--frames":
            frames = int(args[i + 1])
            i += 2
        elif args[i] == "--no-bake":
            bake = False
            i += 1
        else:
            paths.append(args[i])
            i += 1
    if not paths:
        print(__doc__)
        sys.exit(1)
    cli = find_cli()
    if not os.path.exists(cli):
        sys.exit(f"untangle CLI not found at {cli}: build it or set UNTANGLE_CLI")

    print(f"{'case':<11} {'verts':>6} {'pairs in':>8} | {'blender pairs':>13} {'s/frame':>8} "
          f"{'strain':>7} | {'fix pairs':>9} {'strain':>7} {'fix s':>7} {'iters':>5} | "
          f"{'ratio s/frame':>13}")
    bakes = []
    with tempfile.TemporaryDirectory() as work:
        for path in paths:
            name = os.path.splitext(os.path.basename(path))[0]
            vertices, faces = read_obj(path)
            triangles = fan_triangles(faces)
            edges = edges_of(faces)
            pairs_in = overlap_pairs(vertices, triangles)
            b_pairs, b_spf, b_strain = blender_repair(vertices, faces, triangles, frames)
            f_pairs, f_strain, f_seconds, f_iterations, _ = ours_fix(cli, path, triangles, edges,
                                                                      vertices, work)
            # Time per pipeline frame of ours against Blender's time per cloth frame.
            ours_spf = f_seconds / max(f_iterations, 1)
            print(f"{name:<11} {len(vertices):>6} {pairs_in:>8} | {b_pairs:>13} {b_spf:>8.4f} "
                  f"{b_strain:>7.3f} | {f_pairs:>9} {f_strain:>7.4f} {f_seconds:>7.3f} "
                  f"{f_iterations:>5} | {b_spf / ours_spf if ours_spf > 0 else float('inf'):>12.1f}x")
            pc2_path = os.path.splitext(path)[0] + ".pc2"
            if bake and os.path.exists(pc2_path):
                bakes.append((name, len(vertices), ours_bake(cli, path, pc2_path, triangles, edges,
                                                             work), b_spf))
    if bakes:
        print()
        print(f"{'bake':<11} {'verts':>6} {'frames':>6} {'tangled in':>10} {'max in':>6} "
              f"{'max out':>7} {'strain':>7} {'jump out/in':>11} {'s/frame':>8} "
              f"{'blender s/frame / ours':>22}")
        for name, count, r, b_spf in bakes:
            print(f"{name:<11} {count:>6} {r['frames']:>6} {r['frames_tangled_in']:>10} "
                  f"{r['max_pairs_in']:>6} {r['max_pairs_out']:>7} {r['strain']:>7.4f} "
                  f"{r['jump_ratio']:>11.2f} {r['seconds_per_frame']:>8.4f} "
                  f"{b_spf / r['seconds_per_frame'] if r['seconds_per_frame'] > 0 else 0:>21.1f}x")


if __name__ == "__main__":
    main()
