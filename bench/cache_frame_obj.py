"""One frame of a PC2 point cache as an OBJ, to untangle as a single state.

    python3 bench/cache_frame_obj.py TOPOLOGY.obj CACHE.pc2 FRAME OUT.obj

FRAME counts from 0. OUT.obj has the cache's positions at that frame and every line of
TOPOLOGY.obj but its `v` lines (faces, objects, groups), so it is the mesh the cache animates
as it stands at that frame. Used for cases the project did not tune on: later, deeper frames of
the caches bench/make_blender_tangles.py writes (docs/measurements.md, "Cases not tuned on").
Standard library only.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_script import read_pc2  # noqa: E402


def main(args):
    if len(args) != 4:
        print(__doc__)
        return 1
    topology, cache, frame, out = args[0], args[1], int(args[2]), args[3]
    frames = read_pc2(cache)
    if not 0 <= frame < len(frames):
        raise SystemExit(f"{cache}: frame {frame} not in 0..{len(frames) - 1}")
    positions = frames[frame]
    with open(topology) as f:
        lines = f.readlines()
    vertex_lines = sum(1 for line in lines if line.startswith("v "))
    if vertex_lines != len(positions):
        raise SystemExit(f"{topology} has {vertex_lines} vertices, {cache} {len(positions)}")
    with open(out, "w") as o:
        o.write(f"# frame {frame} of {cache}\n")
        for p in positions:
            o.write(f"v {p[0]:.7g} {p[1]:.7g} {p[2]:.7g}\n")
        for line in lines:
            if not line.startswith("v "):
                o.write(line)
    print(f"{out}: frame {frame} of {len(positions)} vertices")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
