"""Two builds of libuntangle.so against each other on `untangle detect`, in alternating processes.

    /usr/bin/python3 bench/ab_detect.py --old-lib DIR [--new-lib DIR] [--rounds 5]
        [--threads 2] [--repeat 150] MESH.obj [MESH.obj ...]

The `untangle` program links libuntangle.so dynamically, so one program runs either library:
copy the library of the commit to compare against into DIR (`cp -L
build/release/capi/libuntangle.so DIR/` before rebuilding), then rebuild. --new-lib defaults to
the program's own (its RUNPATH). The CLI is found as in compare_blender.py (UNTANGLE_CLI, else
build/release/cli/untangle).

Each round runs every mesh once with the old library, then once with the new one; each run
is `untangle detect --json --repeat N`, whose stage times are those of its fastest frame. Printed
per mesh: the best over the rounds of each stage (build, refit, broad, narrow, contours) and of
the frame's total, old -> new, and the total's change. This virtual machine runs the same binary
up to 1.5x faster or slower for minutes at a time: one process against another taken minutes
apart says little, alternating rounds and their best say what a change did.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_script import find_cli  # noqa: E402

STAGES = ("build", "refit", "broad", "narrow", "contours")


def detect(cli, mesh, threads, repeat, library):
    env = dict(os.environ)
    if library:
        env["LD_LIBRARY_PATH"] = library
    command = [cli, "detect", "--json", "--repeat", str(repeat), "--threads", str(threads), mesh]
    seconds = json.loads(subprocess.run(command, env=env, check=True, capture_output=True,
                                        text=True).stdout)["seconds"]
    seconds["total"] = sum(seconds[s] for s in STAGES if s != "build")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old-lib", required=True)
    parser.add_argument("--new-lib", default="")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=150)
    parser.add_argument("meshes", nargs="+")
    args = parser.parse_args()
    cli = find_cli()
    best = {}
    for _ in range(args.rounds):
        for variant, library in (("old", args.old_lib), ("new", args.new_lib)):
            for mesh in args.meshes:
                seconds = detect(cli, mesh, args.threads, args.repeat, library)
                kept = best.setdefault((mesh, variant), {})
                for stage, value in seconds.items():
                    kept[stage] = min(kept.get(stage, float("inf")), value)
    for mesh in args.meshes:
        old, new = best[(mesh, "old")], best[(mesh, "new")]
        name = os.path.splitext(os.path.basename(mesh))[0]
        stages = " ".join(f"{s} {old[s] * 1e3:.3f}->{new[s] * 1e3:.3f}" for s in STAGES + ("total",))
        print(f"{name:<16} {stages}  ({100 * (new['total'] / old['total'] - 1):+.1f} %) ms")


if __name__ == "__main__":
    main()
