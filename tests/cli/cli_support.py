"""What the tests of the `untangle` program share (tests/cli/test_cli_*.py): running the
program, meshes written as OBJ, an independent brute-force triangle-triangle test written here
in Python (no engine code involved), PC2 files written and read by hand, and a test case with
a temporary folder."""

import itertools
import json
import math
import os
import random
import re
import signal
import struct
import subprocess
import sys
import tempfile
import unittest

CLI = os.environ.get("UNTANGLE_CLI", "")
COMMANDS = ("detect", "run", "fix", "bake")


def run(*args, timeout=600):
    """Runs the program; returns (exit status, stdout, stderr)."""
    result = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True,
                            timeout=timeout, stdin=subprocess.DEVNULL)
    return result.returncode, result.stdout, result.stderr


# ---------------------------------------------------------------------------------------------
# Meshes and the independent brute-force detector


def grid(origin, u, v, nu, nv, jitter=0.0, seed=0):
    """A grid sheet of (nu+1) x (nv+1) vertices at origin + i/nu * u + j/nv * v, split into
    triangles here (so that no quad split of the engine's matters)."""
    rng = random.Random(seed)
    points = []
    for j in range(nv + 1):
        for i in range(nu + 1):
            p = [origin[k] + i / nu * u[k] + j / nv * v[k] for k in range(3)]
            points.append([x + rng.uniform(-jitter, jitter) for x in p])
    faces = []
    for j in range(nv):
        for i in range(nu):
            a = j * (nu + 1) + i
            b, c, d = a + 1, a + nu + 2, a + nu + 1
            faces += [(a, b, c), (a, c, d)]
    return points, faces


def tube(center, radius, z0, z1, sides, bands):
    points, faces = [], []
    for r in range(bands + 1):
        z = z0 + (z1 - z0) * r / bands
        for s in range(sides):
            angle = 2 * math.pi * (s + 0.5) / sides
            points.append([center[0] + radius * math.cos(angle),
                           center[1] + radius * math.sin(angle), z])
    for r in range(bands):
        for s in range(sides):
            a, b = r * sides + s, r * sides + (s + 1) % sides
            faces += [(a, b, b + sides), (a, b + sides, a + sides)]
    return points, faces


def write_obj(path, pieces, unused=()):
    """pieces: list of (name, points, faces with 0-based local indices). Unused vertices are
    written first, so the file's numbering differs from the pieces' order."""
    lines = ["# test mesh"]
    for p in unused:
        lines.append("v %r %r %r" % tuple(p))
    offset = len(unused)
    for name, points, faces in pieces:
        lines.append("o " + name)
        lines += ["v %r %r %r" % tuple(p) for p in points]
        lines += ["f " + " ".join(str(offset + i + 1) for i in f) for f in faces]
        offset += len(points)
    with open(path, "w") as out:
        out.write("\n".join(lines) + "\n")


def read_obj(path):
    """Positions and triangles of an OBJ with plain `f a b c` faces (what the tests write)."""
    points, faces = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "v":
                points.append([float(x) for x in parts[1:4]])
            elif parts[0] == "f":
                faces.append(tuple(int(c.split("/")[0]) - 1 for c in parts[1:]))
    return points, faces


def sub(a, b):
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def segment_crosses_triangle(p0, p1, a, b, c):
    """Moller-Trumbore on the open segment and the open triangle (generic inputs only)."""
    d = sub(p1, p0)
    e1, e2 = sub(b, a), sub(c, a)
    h = cross(d, e2)
    det = dot(e1, h)
    if abs(det) < 1e-14:
        return False
    s = sub(p0, a)
    u = dot(s, h) / det
    q = cross(s, e1)
    v = dot(d, q) / det
    t = dot(e2, q) / det
    return 0 < t < 1 and u > 0 and v > 0 and u + v < 1


def brute_force(points, triangles):
    """(intersecting pairs, unique edge-triangle hits) over all triangle pairs sharing no vertex,
    the detector's definition, in O(n^2)."""
    pairs, hits = set(), set()
    boxes = [[[min(points[k][a] for k in t) for a in range(3)],
              [max(points[k][a] for k in t) for a in range(3)]] for t in triangles]
    for i, j in itertools.combinations(range(len(triangles)), 2):
        ti, tj = triangles[i], triangles[j]
        (lo_i, hi_i), (lo_j, hi_j) = boxes[i], boxes[j]
        if any(lo_i[a] > hi_j[a] or lo_j[a] > hi_i[a] for a in range(3)):
            continue  # disjoint boxes cannot intersect: only a speed-up
        if set(ti) & set(tj):
            continue
        for edge_of, tri_index, tri in ((ti, j, tj), (tj, i, ti)):
            corners = [points[k] for k in tri]
            for k in range(3):
                a, b = edge_of[k], edge_of[(k + 1) % 3]
                if segment_crosses_triangle(points[a], points[b], *corners):
                    hits.add((min(a, b), max(a, b), tri_index))
                    pairs.add((i, j))
    return len(pairs), len(hits)


def concat(pieces):
    points, triangles = [], []
    for _, p, f in pieces:
        offset = len(points)
        points += p
        triangles += [tuple(offset + i for i in t) for t in f]
    return points, triangles


def edge_strain(points_in, points_out, triangles):
    worst = 0.0
    edges = {(min(t[k], t[(k + 1) % 3]), max(t[k], t[(k + 1) % 3]))
             for t in triangles for k in range(3)}
    for a, b in edges:
        length_in = math.dist(points_in[a], points_in[b])
        length_out = math.dist(points_out[a], points_out[b])
        worst = max(worst, abs(length_out / length_in - 1))
    return worst


def crossing_sheets():
    """A horizontal sheet and a smaller vertical one dipping 0.07 through it: one open contour
    whose two ends lie on border edges of the vertical sheet (a boundary contour)."""
    floor = grid([0, 0, 0], [1, 0, 0], [0, 1, 0], 8, 8, jitter=0.002, seed=1)
    wall = grid([0.5137, 0.1, -0.07], [0.003, 0.8, 0], [0, 0, 0.6], 4, 3, jitter=0.002, seed=2)
    return [("floor", *floor), ("wall", *wall)]


def bump_through_sheet(height=0.12):
    """A sheet whose smooth bump of the given height pokes through a flat sheet at z = 0.06
    (for height > 0.06): one closed contour around the bump (a loop), the case contour
    minimization resolves by pushing the bump back."""
    lower_points, lower_faces = grid([0, 0, 0], [1, 0, 0], [0, 1, 0], 14, 14)
    for p in lower_points:
        p[2] = height * math.exp(-((p[0] - 0.47) ** 2 + (p[1] - 0.52) ** 2) / 0.02)
    upper = grid([0.05, 0.05, 0.06], [0.9, 0, 0.009], [0, 0.9, 0], 12, 12, jitter=0.001, seed=4)
    return [("lower", lower_points, lower_faces), ("upper", *upper)]


def tube_through_sheet():
    """A tube through a sheet: one closed contour around the tube (a loop)."""
    sheet = grid([-1, -1, 0.013], [2, 0, 0], [0, 2, 0], 10, 10, jitter=0.001, seed=3)
    pipe = tube([0.071, -0.043], 0.33, -0.5, 0.5, 16, 2)
    return [("sheet", *sheet), ("tube", *pipe)]


# PC2: the header as the format defines it (little-endian), written and read here by hand.
def write_pc2(path, frames, start=0.0, sampling=1.0):
    with open(path, "wb") as out:
        out.write(struct.pack("<12siiffi", b"POINTCACHE2\0", 1, len(frames[0]), start, sampling,
                              len(frames)))
        for frame in frames:
            for p in frame:
                out.write(struct.pack("<3f", *p))


def read_pc2(path):
    with open(path, "rb") as f:
        data = f.read()
    signature, version, vertices, start, sampling, count = struct.unpack("<12siiffi", data[:32])
    assert len(data) == 32 + 12 * vertices * count, "PC2 size does not match its header"
    values = struct.unpack("<%df" % (3 * vertices * count), data[32:])
    frames = [[list(values[3 * (f * vertices + v):3 * (f * vertices + v) + 3])
               for v in range(vertices)] for f in range(count)]
    return dict(signature=signature, version=version, vertices=vertices, start=start,
                sampling=sampling, frames=frames)


def as_float32(points):
    return [list(struct.unpack("<3f", struct.pack("<3f", *p))) for p in points]


class Temp(unittest.TestCase):
    def setUp(self):
        self._dir = tempfile.TemporaryDirectory(prefix="untangle_cli_")
        self.dir = self._dir.name

    def tearDown(self):
        self._dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def assertFails(self, status, expected_status, stderr, *needles):
        self.assertEqual(status, expected_status, stderr)
        for needle in needles:
            self.assertIn(needle, stderr)
        self.assertNotIn("terminate called", stderr)
        self.assertNotIn("Sanitizer", stderr)


def main():
    """Runs the calling test file's classes (unittest's command line: -v, class names)."""
    if not CLI or not os.access(CLI, os.X_OK):
        sys.exit("set UNTANGLE_CLI to the untangle program")
    unittest.main(module="__main__")
