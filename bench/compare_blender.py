"""Blender's own BVH overlap against `untangle detect`, on the same meshes in the same run.

    blender -b --factory-startup --python bench/compare_blender.py -- MESH.obj [MESH.obj ...]

For each mesh: Blender's ``mathutils.bvhtree.BVHTree.FromPolygons`` + ``overlap`` (the tree
against itself) is timed in this process; ``untangle detect --json MESH.obj`` runs as a
subprocess and reports its own stage times. The CLI is found through the environment variable
UNTANGLE_CLI, else build/release/cli/untangle next to this script's repository. The meshes of
the benchmark are the crumpled grids written by ``bench_detect --write-obj DIR`` and tangles
made by Blender's own cloth (``bench/make_blender_tangles.py``, ``bench/make_hard_tangles.sh``).

Both get the same triangles (each polygon split as a fan from its first corner, like the
library does), so the counts are of triangle pairs. Blender lists each pair in both orders and
also reports neighbours that only touch at a shared vertex or edge; those are removed (outside
the timed part) before the unordered pairs are compared with ours, which never tests
triangles that share a vertex.

Times are the best of --repeat runs (default 3) on each side. Blender's run is a build +
overlap (its tree cannot be refit from Python), so every run of it is a one-shot. Ours is timed
two ways, each in a new process per round:

- cold: ``untangle detect --repeat 1``: the build (mesh, BVH and the engine's world around them;
  the file is read before) plus the first detection, as a user pays once (Show Intersections,
  the first frame of ``fix``, ``ut_detect``);
- warm: ``untangle detect --repeat N`` builds once, then runs N detections (each a full refit +
  broad + narrow phase + contours, as every simulation frame does) and reports the fastest.

The sides take turns --rounds times (default 3) and each keeps its best round: this virtual
machine has stretches of seconds in which the same process runs 1.4x slower on 2 threads, and
one such stretch should not decide a ratio. Our slowest warm round is printed too, so that such
a stretch shows. Printed per mesh: triangle count, Blender's seconds, ours cold and its ratio
(Blender / ours), ours warm and its ratio, our slowest warm round, and both pair counts.
"""

import json
import os
import subprocess
import sys
import time

from mathutils.bvhtree import BVHTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_script import fan_triangles, find_cli, read_obj, script_arguments  # noqa: E402


def blender_pairs(vertices, triangles, repeat):
    best = float("inf")
    raw = []
    for _ in range(repeat):
        start = time.perf_counter()
        tree = BVHTree.FromPolygons(vertices, triangles, all_triangles=True)
        raw = tree.overlap(tree)
        best = min(best, time.perf_counter() - start)
    pairs = set()
    for a, b in raw:
        if a == b:
            continue
        if set(triangles[a]) & set(triangles[b]):
            continue  # neighbours touching at a shared vertex or edge
        pairs.add((a, b) if a < b else (b, a))
    return best, len(raw), len(pairs)


def untangle_detect(cli, path, repeat, threads):
    """(seconds of the fastest detection, build seconds, result) of one new process."""
    command = [cli, "detect", "--json", "--repeat", str(repeat), path]
    if threads:
        command += ["--threads", str(threads)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    s = result["seconds"]
    return s["refit"] + s["broad"] + s["narrow"] + s["contours"], s["build"], result


def main():
    args = script_arguments()
    repeat, rounds, threads, meshes = 3, 3, 0, []
    i = 0
    while i < len(args):
        if args[i] == "--repeat":
            repeat = int(args[i + 1])
            i += 2
        elif args[i] == "--rounds":
            rounds = int(args[i + 1])
            i += 2
        elif args[i] == "--threads":
            threads = int(args[i + 1])
            i += 2
        else:
            meshes.append(args[i])
            i += 1
    if not meshes:
        print(__doc__)
        sys.exit(1)
    cli = find_cli()
    if not os.path.exists(cli):
        sys.exit(f"untangle CLI not found at {cli}: build it or set UNTANGLE_CLI")

    header = (f"{'mesh':<22} {'triangles':>9} {'blender s':>10} {'cold s':>9} {'ratio':>7} "
              f"{'warm s':>9} {'ratio':>7} {'warm slowest':>12} {'blender pairs':>13} "
              f"{'our pairs':>9}")
    print(header)
    cold_ratios, warm_ratios = [], []
    for path in meshes:
        vertices, faces = read_obj(path)
        triangles = fan_triangles(faces)
        blender_s = cold_s = warm_s = float("inf")
        warm_slowest = 0.0
        for _ in range(rounds):
            round_s, raw_count, blender_count = blender_pairs(vertices, triangles, repeat)
            blender_s = min(blender_s, round_s)
            frame_s, build_s, _ = untangle_detect(cli, path, 1, threads)
            cold_s = min(cold_s, build_s + frame_s)
            frame_s, _, result = untangle_detect(cli, path, repeat, threads)
            warm_s = min(warm_s, frame_s)
            warm_slowest = max(warm_slowest, frame_s)
        cold_ratio = blender_s / cold_s if cold_s > 0 else float("inf")
        warm_ratio = blender_s / warm_s if warm_s > 0 else float("inf")
        name = os.path.splitext(os.path.basename(path))[0]
        print(f"{name:<22} {len(triangles):>9} {blender_s:>10.4f} {cold_s:>9.4f} "
              f"{cold_ratio:>6.1f}x {warm_s:>9.4f} {warm_ratio:>6.1f}x {warm_slowest:>12.4f} "
              f"{blender_count:>13} {result['pairs']:>9}")
        cold_ratios.append(cold_ratio)
        warm_ratios.append(warm_ratio)
        if result["triangles"] != len(triangles):
            print(f"  note: the CLI saw {result['triangles']} triangles")
        if blender_count != result["pairs"]:
            print(f"  note: pair counts differ by {blender_count - result['pairs']:+d} "
                  f"(Blender tests in single precision with its own tolerance; "
                  f"{raw_count} raw ordered pairs)")
    if warm_ratios:
        print(f"smallest ratio (Blender / ours): cold {min(cold_ratios):.1f}x, "
              f"warm {min(warm_ratios):.1f}x")


if __name__ == "__main__":
    main()
