"""The add-on's Untangle Selected and Bake Untangled Cache on the hard tangles, in headless Blender.

    blender -b --factory-startup --python bench/run_addon_tangles.py -- DIR --zip ZIP
        [--cases NAME,PATTERN,...] [--bake NAME,PATTERN,...] [--max-iterations N]

For each CASE.obj of DIR (bench/make_hard_tangles.sh makes them; --cases chooses, shell-style
patterns), as a user would: the mesh as one Blender object (float32 positions, as Blender keeps
them), selected, then Untangle Selected (`cloth_untangle.untangle_selected`) with the scene's
settings. For the cases that --bake names and that have CASE.pc2: a Mesh Cache modifier plays
the PC2, and Bake Untangled Cache (`cloth_untangle.bake_cache`) bakes every frame.

Counted here, independently of the library: pairs by Blender's BVHTree.overlap (triangle pairs
that share no vertex, polygons split as fans from their first corner), strain over every input
edge; for a bake, the pairs of every output frame, the strain against each input frame, and
the largest per-vertex jump between frames, out against in.
"""

import fnmatch
import glob
import os
import sys
import tempfile
import time

import bpy
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_script import fan_triangles, read_obj, script_arguments  # noqa: E402
from run_hard_tangles import edges_of, max_strain, overlap_pairs, read_pc2  # noqa: E402


def install(zip_path):
    folder = tempfile.mkdtemp(prefix="cloth_untangle_addon_bench_")
    os.environ["BLENDER_USER_SCRIPTS"] = folder
    bpy.ops.preferences.addon_install(filepath=zip_path, overwrite=True)
    bpy.ops.preferences.addon_enable(module="cloth_untangle")


def new_object(name, vertices, faces):
    from cloth_untangle import meshdata
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    sizes = [len(f) for f in faces]
    indices = [i for f in faces for i in f]
    mesh = meshdata.new_mesh(bpy.data, name, np.asarray(vertices), sizes, indices)
    obj = bpy.data.objects.new(name, mesh)
    bpy.context.collection.objects.link(obj)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    return obj


def positions_of(obj):
    co = np.empty(3 * len(obj.data.vertices), dtype=np.float32)
    obj.data.vertices.foreach_get("co", co)
    return co.reshape(-1, 3).astype(np.float64)


def untangle_selected(path, max_iterations):
    vertices, faces = read_obj(path)
    name = os.path.splitext(os.path.basename(path))[0]
    obj = new_object(name, vertices, faces)
    before = positions_of(obj)  # as Blender holds them: float32
    triangles = fan_triangles(faces)
    props = bpy.context.scene.cloth_untangle
    if max_iterations is not None:  # else the add-on's default
        props.max_iterations = max_iterations
    pairs_in = overlap_pairs(before, triangles)
    start = time.perf_counter()
    result = bpy.ops.cloth_untangle.untangle_selected()
    seconds = time.perf_counter() - start
    after = positions_of(obj)
    return {"name": name, "vertices": len(vertices), "result": sorted(result),
            "status": props.status, "pairs in": pairs_in,
            "pairs out": overlap_pairs(after, triangles),
            "strain": max_strain(edges_of(faces), before, after), "seconds": seconds}


def bake_cache(path, pc2_path):
    vertices, faces = read_obj(path)
    name = os.path.splitext(os.path.basename(path))[0]
    frames_in = read_pc2(pc2_path)
    obj = new_object(name, frames_in[0], faces)
    modifier = obj.modifiers.new("Cache", 'MESH_CACHE')
    modifier.cache_format = 'PC2'
    modifier.filepath = pc2_path
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, len(frames_in)
    modifier.frame_start = 1
    folder = tempfile.mkdtemp(prefix="cloth_untangle_addon_bake_")
    start = time.perf_counter()
    result = bpy.ops.cloth_untangle.bake_cache(directory=folder)
    seconds = time.perf_counter() - start
    found = glob.glob(os.path.join(folder, "*.pc2"))
    if not found:
        return {"name": name, "result": sorted(result), "status": scene.cloth_untangle.status}
    frames_out = read_pc2(found[0])
    triangles = fan_triangles(faces)
    edges = edges_of(faces)
    pairs = [overlap_pairs(f, triangles) for f in frames_out]
    pairs_in = [overlap_pairs(f, triangles) for f in frames_in]
    strain = max(max_strain(edges, a, b) for a, b in zip(frames_in, frames_out))

    def largest_jump(frames):
        return max(float(np.linalg.norm(frames[k + 1] - frames[k], axis=1).max())
                   for k in range(len(frames) - 1))

    return {"name": name, "result": sorted(result), "status": scene.cloth_untangle.status,
            "frames": f"{len(frames_out)}/{len(frames_in)}",
            "tangled in -> out": f"{sum(p > 0 for p in pairs_in)} -> {sum(p > 0 for p in pairs)}",
            "most pairs in -> out": f"{max(pairs_in)} -> {max(pairs)}",
            "strain": strain, "jump out/in": largest_jump(frames_out) / largest_jump(frames_in),
            "s/frame": seconds / len(frames_in)}


def wanted(name, patterns):
    return not patterns or any(fnmatch.fnmatch(name, p) for p in patterns)


def main():
    args = script_arguments()
    if not args or "--zip" not in args:
        print(__doc__)
        sys.exit(2)
    folder = args[0]
    zip_path = args[args.index("--zip") + 1]
    cases = args[args.index("--cases") + 1].split(",") if "--cases" in args else []
    bakes = args[args.index("--bake") + 1].split(",") if "--bake" in args else []
    max_iterations = int(args[args.index("--max-iterations") + 1]) \
        if "--max-iterations" in args else None
    install(zip_path)
    for path in sorted(glob.glob(os.path.join(folder, "*.obj"))):
        name = os.path.splitext(os.path.basename(path))[0]
        if wanted(name, cases):
            r = untangle_selected(path, max_iterations)
            print(f"untangle_selected {name}: {r['vertices']} vertices, pairs {r['pairs in']} -> "
                  f"{r['pairs out']}, strain {100 * r['strain']:.2f} %, {r['seconds']:.2f} s, "
                  f"{r['result']} \"{r['status']}\"", flush=True)
        pc2_path = os.path.splitext(path)[0] + ".pc2"
        if bakes and wanted(name, bakes) and os.path.exists(pc2_path):
            r = bake_cache(path, pc2_path)
            print(f"bake_cache {name}: " + ", ".join(
                f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {v}"
                for k, v in r.items() if k != "name"), flush=True)


if __name__ == "__main__":
    main()
