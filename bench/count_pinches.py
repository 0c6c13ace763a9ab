"""Counts the pinched fans of a mesh: pairs of triangles that share exactly one vertex and cross
(an edge of one, not through the shared vertex, passes through the other). The narrow phase
skips such pairs, as Blender's BVHTree.overlap counts leave them out, so an intersection curve
that reaches one ends there: an open ("crease") contour. An independent all-pairs check with
numpy; used to diagnose what the untangler leaves on dense collapses (docs/untangler.md).

    /usr/bin/python3 bench/count_pinches.py MESH.obj ...
"""
import itertools
import os
import sys
from collections import defaultdict

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_script import fan_triangles, read_obj  # noqa: E402


def read_triangles(path):
    vertices, faces = read_obj(path)
    return np.array(vertices), np.array(fan_triangles(faces))


def crosses(p, q, a, b, c, tolerance=1e-10):
    """Segments p-q strictly through the inside of triangles a-b-c (Moller-Trumbore, rows)."""
    d, e1, e2 = q - p, b - a, c - a
    pv = np.cross(d, e2)
    det = np.einsum("ij,ij->i", e1, pv)
    ok = np.abs(det) > 1e-300
    inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
    s = p - a
    u = np.einsum("ij,ij->i", s, pv) * inv
    qv = np.cross(s, e1)
    v = np.einsum("ij,ij->i", d, qv) * inv
    t = np.einsum("ij,ij->i", e2, qv) * inv
    return ok & (u > tolerance) & (v > tolerance) & (u + v < 1 - tolerance) & \
        (t > tolerance) & (t < 1 - tolerance)


def pinches(vertices, triangles):
    by_vertex = defaultdict(list)
    for i, tri in enumerate(triangles):
        for v in tri:
            by_vertex[v].append(i)
    first, second, shared = [], [], []
    for v, around in by_vertex.items():
        for a, b in itertools.combinations(around, 2):
            if len(set(triangles[a]) & set(triangles[b])) == 1:
                first.append(a)
                second.append(b)
                shared.append(v)
    if not first:
        return 0, 0
    first, second, shared = np.array(first), np.array(second), np.array(shared)

    def opposite(tris):  # the edge of each triangle that does not touch the shared vertex
        keep = tris != shared[:, None]
        return np.array([row[mask] for row, mask in zip(tris, keep)])

    ta, tb = triangles[first], triangles[second]
    ea, eb = opposite(ta), opposite(tb)
    x = vertices
    hit = crosses(x[ea[:, 0]], x[ea[:, 1]], x[tb[:, 0]], x[tb[:, 1]], x[tb[:, 2]]) | \
        crosses(x[eb[:, 0]], x[eb[:, 1]], x[ta[:, 0]], x[ta[:, 1]], x[ta[:, 2]])
    return int(hit.sum()), len(set(shared[hit].tolist()))


def main(paths):
    if not paths:
        print(__doc__)
        return 2
    for path in paths:
        vertices, triangles = read_triangles(path)
        pairs, at = pinches(vertices, triangles)
        print("%s: %d crossing pairs that share one vertex, at %d vertices" % (path, pairs, at))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
