#!/usr/bin/env python3
"""Midpoint subdivision of a triangle OBJ, as Untangling26 subdivides its canonical units.

    python3 bench/subdivide_obj.py IN.obj OUT.obj [--levels 3]
    python3 bench/subdivide_obj.py --wicke OUTDIR [--levels 3]

Each level splits every triangle into four at its edge midpoints (trimesh's `subdivide`, which
the authors' demo_unit.py applies three times: `--use_subdivision --subdiv_levels 3`); the
positions of the old vertices do not move, so the surface and its intersections stay exactly
those of the input, on 4^levels times as many triangles. Polygons with more than three corners
are first split as a fan from their first corner (as the library does). The output keeps one
`o` line per object of the input. Pure Python, no dependencies.

--wicke writes the seven units of bench/data/wicke/ as OUTDIR/wicke_NAME.obj (e.g.
wicke_BBII.obj), subdivided --levels times.
"""

import os
import sys


def read_obj(path):
    """Vertices, and faces grouped by object: [(name, [corner tuples, 0-based])]."""
    vertices, objects = [], [(None, [])]
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "v":
                vertices.append(tuple(float(x) for x in parts[1:4]))
            elif parts[0] in ("o", "g"):
                objects.append((" ".join(parts[1:]), []))
            elif parts[0] == "f":
                corners = []
                for token in parts[1:]:
                    index = int(token.split("/")[0])
                    corners.append(index - 1 if index > 0 else len(vertices) + index)
                objects[-1][1].append(tuple(corners))
    return vertices, [(name, faces) for name, faces in objects if faces]


def subdivide(vertices, objects):
    vertices = list(vertices)
    midpoint = {}

    def mid(a, b):
        key = (min(a, b), max(a, b))
        if key not in midpoint:
            p, q = vertices[a], vertices[b]
            midpoint[key] = len(vertices)
            vertices.append(tuple((x + y) / 2 for x, y in zip(p, q)))
        return midpoint[key]

    out = []
    for name, faces in objects:
        new = []
        for face in faces:
            for k in range(1, len(face) - 1):
                a, b, c = face[0], face[k], face[k + 1]
                ab, bc, ca = mid(a, b), mid(b, c), mid(c, a)
                new += [(a, ab, ca), (ab, b, bc), (ca, bc, c), (ab, bc, ca)]
        out.append((name, new))
    return vertices, out


def write_obj(path, vertices, objects, comment):
    with open(path, "w") as f:
        f.write(f"# {comment}\n")
        for x, y, z in vertices:
            f.write(f"v {x:.9g} {y:.9g} {z:.9g}\n")
        for name, faces in objects:
            if name:
                f.write(f"o {name}\n")
            for face in faces:
                f.write("f " + " ".join(str(i + 1) for i in face) + "\n")


def subdivide_file(source, target, levels):
    vertices, objects = read_obj(source)
    for _ in range(levels):
        vertices, objects = subdivide(vertices, objects)
    write_obj(target, vertices, objects,
              f"{os.path.basename(source)} subdivided {levels}x at edge midpoints "
              f"(bench/subdivide_obj.py)")
    return len(vertices), sum(len(faces) for _, faces in objects)


def main(args):
    levels = 3
    if "--levels" in args:
        i = args.index("--levels")
        levels = int(args[i + 1])
        del args[i:i + 2]
    if len(args) == 2 and args[0] == "--wicke":
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "wicke")
        os.makedirs(args[1], exist_ok=True)
        for name in sorted(os.listdir(here)):
            if name.startswith("unit_") and name.endswith(".obj"):
                target = os.path.join(args[1], "wicke_" + name[5:])
                v, t = subdivide_file(os.path.join(here, name), target, levels)
                print(f"{os.path.basename(target):<20} {v:>6} vertices {t:>6} triangles")
    elif len(args) == 2:
        v, t = subdivide_file(args[0], args[1], levels)
        print(f"{args[1]}: {v} vertices, {t} triangles")
    else:
        print(__doc__)
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
