"""Tangles whose crossings run exactly along mesh vertices and edges, as modelled input has them
(sheets made on one grid): the narrow phase drops every such hit, so they test the untangler's
general position (docs/untangler.md).

    python3 bench/make_exact_crossings.py OUTDIR [--triangulate]

- cross_exact.obj: a flat 11 x 11 grid (spacing 0.1) and an upright one of the same spacing
  through it along its middle row of vertices, from border to border.
- slot_exact.obj: the same flat grid and a 5 x 5 upright grid through the middle of that row,
  inside the flat one (a slot, not a border-to-border cut).
With --triangulate, also *_tri.obj: every quad split along its diagonal from corner 0.
"""
import os
import sys


def grid(columns, rows, place, vertices, faces, triangulate):
    base = len(vertices)
    for j in range(rows):
        for i in range(columns):
            vertices.append(place(i, j))
    for j in range(rows - 1):
        for i in range(columns - 1):
            a = base + j * columns + i
            quad = (a, a + 1, a + columns + 1, a + columns)
            if triangulate:
                faces += [(quad[0], quad[1], quad[2]), (quad[0], quad[2], quad[3])]
            else:
                faces.append(quad)


def write(path, vertices, faces):
    with open(path, "w") as out:
        for v in vertices:
            out.write("v %.17g %.17g %.17g\n" % v)
        for f in faces:
            out.write("f " + " ".join(str(k + 1) for k in f) + "\n")


def flat(i, j):
    return (0.1 * i, 0.1 * j, 0.0)


CASES = {
    "cross_exact": [(11, 11, flat), (11, 11, lambda i, j: (0.1 * i, 0.5, -0.5 + 0.1 * j))],
    "slot_exact": [(11, 11, flat), (5, 5, lambda i, j: (0.3 + 0.1 * i, 0.5, -0.2 + 0.1 * j))],
}


def main(argv):
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    out = argv[0]
    os.makedirs(out, exist_ok=True)
    forms = [False] + ([True] if "--triangulate" in argv[1:] else [])
    for name, pieces in CASES.items():
        for triangulate in forms:
            vertices, faces = [], []
            for columns, rows, place in pieces:
                grid(columns, rows, place, vertices, faces, triangulate)
            path = os.path.join(out, name + ("_tri" if triangulate else "") + ".obj")
            write(path, vertices, faces)
            print("%-22s %6d vertices %6d faces" % (os.path.basename(path), len(vertices),
                                                     len(faces)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
