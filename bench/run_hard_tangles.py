"""The hard tangles of issue 19 through `untangle fix` and `untangle bake`, measured by Blender.

    blender -b --factory-startup --python bench/run_hard_tangles.py -- DIR
        [--cases NAME,PATTERN,...] [--threads 2] [--timeout 300] [--no-bake] [--no-fix]
        [--results FILE.json]

DIR holds the cases as CASE.obj (and CASE.pc2 for a cache), as bench/make_hard_tangles.sh
writes them; every CASE.obj in DIR is a case unless --cases names some (shell-style patterns
allowed, e.g. 'wicke_*,spiral_*'), smallest first. For each case:

- `untangle fix CASE.obj -o OUT.obj --json --threads N`, killed after --timeout seconds. The
  pairs before and after are counted here with Blender's `BVHTree.overlap` (unordered triangle
  pairs sharing no vertex; polygons fanned from their first corner as the library splits
  them), not taken from the CLI's report (its own count is shown beside, as "ours"); the strain
  is the largest |length_out / length_in - 1| over every edge of every input face (all polygon
  edges; for a triangle mesh every triangle edge; quad diagonals do not count); the seconds
  are the wall time of the process; the iterations come from its JSON.
- when CASE.pc2 exists, `untangle bake CASE.obj CASE.pc2 -o OUT.pc2 --json --threads N`: per
  frame Blender's pair count in and out, the strain of each output frame against its input
  frame, the largest per-vertex jump between consecutive frames of the output against that of
  the input (target <= 1.5), and s/frame of the whole process. At the timeout the bake gets
  SIGINT (it then writes the frames it finished) and the finished frames are measured.

A crash (non-zero exit, a signal), a timeout or unreadable output is reported as such in the
row, and the run goes on with the next case. One row per case is printed as it finishes, and
all figures go to --results (default DIR/hard_tangles_results.json). The CLI is
$UNTANGLE_CLI, else build/release/cli/untangle of this repository.
"""

import fnmatch
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
from mathutils.bvhtree import BVHTree

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blender_script  # noqa: E402
from blender_script import fan_triangles, find_cli, read_obj, script_arguments  # noqa: E402


def read_pc2(path):
    return np.asarray(blender_script.read_pc2(path), dtype=np.float64)


def overlap_pairs(positions, triangles):
    """Blender's count: unordered triangle pairs that intersect and share no vertex."""
    tree = BVHTree.FromPolygons([tuple(p) for p in positions], triangles, all_triangles=True)
    found = tree.overlap(tree)
    if not found:
        return 0
    tri = np.asarray(triangles, dtype=np.int64)
    # Blender lists a pair in both orders: count each unordered pair once.
    both = np.array(found, dtype=np.int64)
    both = both[both[:, 0] != both[:, 1]]
    both = np.unique(np.sort(both, axis=1), axis=0)
    a, b = tri[both[:, 0]], tri[both[:, 1]]
    shared = (a[:, :, None] == b[:, None, :]).any(axis=(1, 2))
    return int((~shared).sum())


def edges_of(faces):
    edges = set()
    for face in faces:
        for k in range(len(face)):
            a, b = face[k], face[(k + 1) % len(face)]
            edges.add((min(a, b), max(a, b)))
    return np.array(sorted(edges), dtype=np.int64)


def max_strain(edges, reference, positions):
    before = np.linalg.norm(reference[edges[:, 0]] - reference[edges[:, 1]], axis=1)
    after = np.linalg.norm(positions[edges[:, 0]] - positions[edges[:, 1]], axis=1)
    keep = before > 0
    return float(np.abs(after[keep] / before[keep] - 1).max()) if keep.any() else 0.0


def run(command, timeout, interrupt_first):
    """(status, stdout, seconds): status 'ok', 'timeout', 'crash (...)'."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        if interrupt_first:
            os.killpg(process.pid, signal.SIGINT)
            try:
                out, err = process.communicate(timeout=60)
                return "timeout", out, time.perf_counter() - start
            except subprocess.TimeoutExpired:
                pass
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        return "timeout", out, time.perf_counter() - start
    seconds = time.perf_counter() - start
    if process.returncode < 0:
        name = signal.Signals(-process.returncode).name
        return f"crash ({name})", out, seconds
    if process.returncode != 0:
        tail = (err or "").strip().splitlines()[-1:] or [""]
        return f"crash (exit {process.returncode}: {tail[0][:60]})", out, seconds
    return "ok", out, seconds


def parse_json(text):
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def do_fix(cli, path, case, threads, timeout, work):
    out_path = os.path.join(work, case["name"] + "_fixed.obj")
    status, out, seconds = run([cli, "fix", path, "-o", out_path, "--json", "--threads",
                                str(threads)], timeout, interrupt_first=False)
    result = {"status": status, "seconds": seconds}
    report = parse_json(out) if status == "ok" else None
    if status == "ok" and report is None:
        result["status"] = "bad json"
    if report:
        result.update(iterations=report.get("iterations"), ours_after=report.get("pairs_after"),
                      ours_before=report.get("pairs_before"),
                      ours_strain=report.get("max_edge_strain"), cli_seconds=report.get("seconds"))
    if status == "ok" and os.path.exists(out_path):
        try:
            fixed, _ = read_obj(out_path)
            fixed = np.array(fixed)
            if len(fixed) != len(case["vertices"]):
                raise ValueError("vertex count changed")
            result["pairs_after"] = overlap_pairs(fixed, case["triangles"])
            result["strain"] = max_strain(case["edges"], case["vertices"], fixed)
        except (ValueError, IndexError) as error:
            result["status"] = f"bad output ({error})"
    elif status == "ok":
        result["status"] = "no output"
    return result


def do_bake(cli, path, pc2_path, case, threads, timeout, work):
    out_path = os.path.join(work, case["name"] + "_baked.pc2")
    status, out, seconds = run([cli, "bake", path, pc2_path, "-o", out_path, "--json",
                                "--threads", str(threads)], timeout, interrupt_first=True)
    frames_in = read_pc2(pc2_path)
    result = {"status": status, "seconds": seconds, "frames_in": len(frames_in)}
    report = parse_json(out)
    if report:
        result.update(iterations=report.get("iterations"),
                      cli_seconds_per_frame=report.get("seconds_per_frame"))
    if not os.path.exists(out_path):
        result["status"] = status if status != "ok" else "no output"
        return result
    frames_out = read_pc2(out_path)
    count = len(frames_out)
    result["frames"] = count
    if count == 0:
        return result
    triangles, edges = case["triangles"], case["edges"]
    pairs_in = [overlap_pairs(frame, triangles) for frame in frames_in[:count]]
    pairs_out = [overlap_pairs(frame, triangles) for frame in frames_out]
    jump_in = max((float(np.linalg.norm(frames_in[f] - frames_in[f - 1], axis=1).max())
                   for f in range(1, count)), default=0.0)
    jump_out = max((float(np.linalg.norm(frames_out[f] - frames_out[f - 1], axis=1).max())
                    for f in range(1, count)), default=0.0)
    result.update(
        pairs_in=pairs_in, pairs_out=pairs_out,
        tangled_in=sum(1 for p in pairs_in if p), tangled_out=sum(1 for p in pairs_out if p),
        max_pairs_in=max(pairs_in), max_pairs_out=max(pairs_out),
        strain=max(max_strain(edges, a, b) for a, b in zip(frames_in, frames_out)),
        jump_in=jump_in, jump_out=jump_out,
        jump_ratio=jump_out / jump_in if jump_in > 0 else 0.0,
        seconds_per_frame=seconds / count)
    return result


def fmt(value, spec, missing="–"):
    return format(value, spec) if isinstance(value, (int, float)) else missing


HEADER = ("| case | vertices | triangles | pairs in | fix | pairs out (ours) | strain | s | "
          "iterations | bake | frames done/in | tangled in→out | most pairs in→out | strain | "
          "jump out/in | s/frame |")


def row(case, fix, bake):
    cells = [case["name"], f"{len(case['vertices']):,}", f"{len(case['triangles']):,}",
             f"{case['pairs_in']:,}"]
    if fix is None:
        cells += ["not run"] + ["–"] * 4
    else:
        cells += [fix["status"],
                  f"{fmt(fix.get('pairs_after'), ',')} ({fmt(fix.get('ours_after'), ',')})",
                  fmt(fix.get("strain", None) and 100 * fix["strain"], ".1f") + " %"
                  if "strain" in fix else "–",
                  fmt(fix["seconds"], ".2f"), fmt(fix.get("iterations"), "d")]
    if bake is None:
        cells += ["–"] * 7
    else:
        cells += [bake["status"], f"{fmt(bake.get('frames'), 'd')}/{bake['frames_in']}",
                  f"{fmt(bake.get('tangled_in'), 'd')}→{fmt(bake.get('tangled_out'), 'd')}",
                  f"{fmt(bake.get('max_pairs_in'), ',')}→{fmt(bake.get('max_pairs_out'), ',')}",
                  fmt(bake.get("strain", None) and 100 * bake["strain"], ".1f") + " %"
                  if "strain" in bake else "–",
                  fmt(bake.get("jump_ratio"), ".2f"), fmt(bake.get("seconds_per_frame"), ".3f")]
    return "| " + " | ".join(cells) + " |"


def main():
    args = script_arguments()
    if not args or args[0].startswith("-"):
        print(__doc__)
        sys.exit(1)
    directory, patterns, threads, timeout = args[0], None, 2, 300.0
    fix_on, bake_on, results_path = True, True, None
    i = 1
    while i < len(args):
        if args[i] == "--cases":
            patterns = args[i + 1].split(",")
        elif args[i] == "--threads":
            threads = int(args[i + 1])
        elif args[i] == "--timeout":
            timeout = float(args[i + 1])
        elif args[i] == "--results":
            results_path = args[i + 1]
        elif args[i] in ("--no-bake", "--no-fix"):
            fix_on = fix_on and args[i] != "--no-fix"
            bake_on = bake_on and args[i] != "--no-bake"
            i += 1
            continue
        else:
            raise SystemExit(f"unknown option {args[i]}")
        i += 2
    results_path = results_path or os.path.join(directory, "hard_tangles_results.json")
    cli = find_cli()
    if not os.path.exists(cli):
        sys.exit(f"untangle CLI not found at {cli}: build it or set UNTANGLE_CLI")
    names = sorted(f[:-4] for f in os.listdir(directory) if f.endswith(".obj"))
    if patterns:
        chosen = []
        for pattern in patterns:
            chosen += [n for n in names if fnmatch.fnmatchcase(n, pattern) and n not in chosen]
        names = chosen
    else:
        names.sort(key=lambda n: os.path.getsize(os.path.join(directory, n + ".obj")))
    if not names:
        sys.exit(f"no case in {directory}")
    print(f"CLI {cli}, {threads} threads, timeout {timeout:.0f} s per run; pairs by Blender's "
          f"BVHTree.overlap, strain over every input edge", flush=True)
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for name in names:
            path = os.path.join(directory, name + ".obj")
            vertices, faces = read_obj(path)
            case = {"name": name, "vertices": np.array(vertices), "faces": faces,
                    "triangles": fan_triangles(faces), "edges": edges_of(faces)}
            case["pairs_in"] = overlap_pairs(case["vertices"], case["triangles"])
            fix = bake = None
            try:
                fix = do_fix(cli, path, case, threads, timeout, work) if fix_on else None
            except Exception as error:  # noqa: BLE001 -- a broken output must not stop the run
                fix = {"status": f"runner error ({type(error).__name__}: {error})"[:80],
                       "seconds": None}
            pc2_path = os.path.join(directory, name + ".pc2")
            try:
                bake = (do_bake(cli, path, pc2_path, case, threads, timeout, work)
                        if bake_on and os.path.exists(pc2_path) else None)
            except Exception as error:  # noqa: BLE001
                bake = {"status": f"runner error ({type(error).__name__}: {error})"[:80],
                        "frames_in": "?"}
            print(row(case, fix, bake), flush=True)
            results.append({"case": name, "vertices": len(vertices),
                            "triangles": len(case["triangles"]), "pairs_in": case["pairs_in"],
                            "fix": fix, "bake": bake})
            with open(results_path, "w") as f:
                json.dump({"cli": cli, "threads": threads, "timeout": timeout,
                           "cases": results}, f, indent=1)
            for suffix in ("_fixed.obj", "_baked.pc2"):
                leftover = os.path.join(work, name + suffix)
                if os.path.exists(leftover):
                    os.remove(leftover)
    print(f"results in {results_path}")


if __name__ == "__main__":
    main()
