"""Tests of the `untangle` program as a user runs it: exit statuses, messages, --help on every
command, the JSON keys the issues list, and the figures checked against an independent
brute-force triangle-triangle test written here in Python (no engine code involved).

Run: UNTANGLE_CLI=build/<preset>/cli/untangle /usr/bin/python3 tests/cli/test_cli.py [Class]
"""

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


# ---------------------------------------------------------------------------------------------


class Help(Temp):
    """--help on the program and every command, --version, and usage errors."""

    def test_program_help_lists_every_command(self):
        status, out, _ = run("--help")
        self.assertEqual(status, 0)
        for command in COMMANDS:
            self.assertRegex(out, r"\n  %s\s" % command)

    def test_every_command_has_help(self):
        # Every command the program lists, also those added later (compare).
        _, out, _ = run("--help")
        listed = re.findall(r"^  ([a-z]+)\s{2,}\S", out.split("commands:")[1].split("options:")[0],
                            re.M)
        self.assertTrue(set(COMMANDS) <= set(listed), listed)
        for command in listed:
            status, out, err = run(command, "--help")
            self.assertEqual(status, 0, err)
            self.assertTrue(out.startswith("usage: untangle %s" % command), out)
            self.assertIn("--json", out)

    def test_version_is_the_abi_version(self):
        status, out, _ = run("--version")
        self.assertEqual(status, 0)
        self.assertRegex(out, r"^untangle \S+ \(libuntangle ABI 1\.\d+\.\d+\)\n$")

    def test_usage_errors_exit_2_with_a_message(self):
        mesh = self.path("m.obj")
        write_obj(mesh, crossing_sheets())
        cases = [
            ((), "usage: untangle COMMAND"),
            (("frobnicate",), "unknown command 'frobnicate'"),
            (("detect",), "missing MESH.obj"),
            (("detect", mesh, "--bogus"), "unknown option '--bogus'"),
            (("detect", mesh, "--threads", "x"), "--threads expects a whole number"),
            (("detect", mesh, "--threads", "-1"), "--threads expects a whole number"),
            (("detect", mesh, "extra"), "unexpected argument 'extra'"),
            (("detect", mesh, "--json", "--json"), "--json is given twice"),
            (("run", "no-such-scene"), "unknown scene 'no-such-scene'"),
            (("run", "two-sheets", "--frames", "0"), "--frames expects a whole number from 1"),
            (("run", "two-sheets", "--frames", "2.5"), "--frames expects a whole number"),
            (("run", "two-sheets", "--frames"), "--frames needs a value"),
            (("run", "two-sheets", "--strength", "nan"), "--strength expects a number"),
            (("run", "two-sheets", "--method", "magic"), "unknown method 'magic'"),
            (("fix", mesh), "missing -o OUT.obj"),
            (("fix", mesh, "-o", self.path("o.obj"), "--max-iterations", "0"),
             "--max-iterations expects a whole number"),
            (("bake", mesh), "missing IN.pc2"),
            (("bake", mesh, self.path("x.pc2")), "missing -o OUT.pc2"),
        ]
        for args, needle in cases:
            status, _, err = run(*args)
            self.assertFails(status, 2, err, needle)


class BadInput(Temp):
    """Bad files: exit status 1 and a message naming the file and the problem, never a crash."""

    def write(self, name, text):
        path = self.path(name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_missing_file(self):
        missing = self.path("missing.obj")
        for args in (("detect", missing), ("fix", missing, "-o", self.path("o.obj"))):
            status, _, err = run(*args)
            self.assertFails(status, 1, err, missing)

    def test_malformed_obj_names_the_line(self):
        tri = "v 0 0 0\nv 1 0 0\nv 0 1 0\n"
        cases = [
            (tri + "f 1 2 x\n", ":4: 'x' is not a vertex index"),
            (tri + "f 1 2 4\n", ":4: face uses vertex 4, but the file defines 3"),
            ("v 0 0 0\nv 1 0 nan\nv 0 1 0\nf 1 2 3\n", ":2: 'nan' is not a finite number"),
            (tri + "f 1 2\n", ":4: face has 2 corners"),
            (tri, "has no faces"),
        ]
        for k, (text, needle) in enumerate(cases):
            path = self.write("bad%d.obj" % k, text)
            status, _, err = run("detect", path)
            self.assertFails(status, 1, err, path, needle)

    def test_coordinate_beyond_float_range_is_named(self):
        # A valid double, but Inf in the library's floats: not to be called "non-finite".
        path = self.write("huge.obj", "v 0 0 0\nv 1e39 0 0\nv 0 1 0\nf 1 2 3\n")
        status, _, err = run("detect", path)
        self.assertFails(status, 1, err, path,
                         "vertex 2 (1e+39, 0, 0) is beyond the range of a float")

    def test_invalid_mesh_is_refused_by_the_engine(self):
        path = self.write("repeat.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 2 3\n")
        status, _, err = run("detect", path)
        self.assertFails(status, 1, err, path + ": invalid mesh: face 0")

    def test_bad_caches(self):
        mesh = self.path("m.obj")
        pieces = crossing_sheets()
        write_obj(mesh, pieces)
        points, _ = concat(pieces)
        good = self.path("good.pc2")
        write_pc2(good, [points, points])
        short = self.path("short.pc2")
        with open(good, "rb") as f, open(short, "wb") as out:
            out.write(f.read()[:-5])
        wrong = self.path("wrong.pc2")
        write_pc2(wrong, [points[:-1]])
        empty = self.path("empty.pc2")
        with open(empty, "wb") as out:
            out.write(struct.pack("<12siiffi", b"POINTCACHE2\0", 1, len(points), 0, 1, 0))
        for cache, needle in ((short, "truncated"), (wrong, "vertices"), (empty, "no frame"),
                              (mesh, "not a PC2 file")):
            status, _, err = run("bake", mesh, cache, "-o", self.path("out.pc2"))
            self.assertFails(status, 1, err, cache, needle)


class Detect(Temp):
    KEYS = {"triangles", "pairs", "hits", "contours", "culled_nodes", "seconds"}

    def detect(self, *args):
        status, out, err = run("detect", *args, "--json")
        self.assertEqual(status, 0, err)
        return json.loads(out)

    def test_json_keys_exactly(self):
        mesh = self.path("m.obj")
        write_obj(mesh, crossing_sheets())
        result = self.detect(mesh)
        self.assertEqual(set(result), self.KEYS)
        self.assertEqual(set(result["contours"]), {"loop", "boundary", "crease"})
        self.assertEqual(set(result["seconds"]), {"build", "refit", "broad", "narrow", "contours"})
        for value in result["seconds"].values():
            self.assertGreaterEqual(value, 0)

    def test_counts_match_brute_force_and_known_contours(self):
        # The two configurations' contours are known by construction (see their docstrings);
        # pairs and hits come from the all-pairs test above.
        for pieces, contours in ((crossing_sheets(), {"loop": 0, "boundary": 1, "crease": 0}),
                                 (tube_through_sheet(), {"loop": 1, "boundary": 0, "crease": 0}),
                                 (bump_through_sheet(), {"loop": 1, "boundary": 0, "crease": 0})):
            mesh = self.path("m.obj")
            write_obj(mesh, pieces)
            points, triangles = concat(pieces)
            pairs, hits = brute_force(points, triangles)
            self.assertGreater(pairs, 0)
            for extra in ((), ("--no-cull",), ("--threads", "1"), ("--threads", "2")):
                result = self.detect(mesh, *extra)
                self.assertEqual(result["triangles"], len(triangles))
                self.assertEqual(result["pairs"], pairs, extra)
                self.assertEqual(result["hits"], hits, extra)
                self.assertEqual(result["contours"], contours, extra)

    def test_flat_sheet_is_culled_and_clean(self):
        mesh = self.path("flat.obj")
        write_obj(mesh, [("flat", *grid([0, 0, 0], [1, 0, 0], [0, 1, 0], 12, 12))])
        culled = self.detect(mesh)
        self.assertEqual(culled["pairs"], 0)
        self.assertGreater(culled["culled_nodes"], 0)
        self.assertEqual(self.detect(mesh, "--no-cull")["culled_nodes"], 0)

    def test_text_output(self):
        mesh = self.path("m.obj")
        write_obj(mesh, tube_through_sheet())
        status, out, err = run("detect", mesh)
        self.assertEqual(status, 0, err)
        pairs, _ = brute_force(*concat(tube_through_sheet()))
        self.assertRegex(out, r"intersecting pairs\s+%d\n" % pairs)
        self.assertRegex(out, r"contours\s+1: 1 loop, 0 boundary, 0 crease")
        self.assertRegex(out, r"seconds\s+build [\d.]+\s+refit [\d.]+\s+broad [\d.]+\s+narrow")


class Fix(Temp):
    def test_fix_untangles_and_keeps_the_file(self):
        pieces = bump_through_sheet()
        unused = [[5.0, 5.0, 5.0]]
        mesh, fixed = self.path("in.obj"), self.path("out.obj")
        write_obj(mesh, pieces, unused=unused)
        points_in, triangles_in = read_obj(mesh)
        pairs_in, _ = brute_force(points_in, triangles_in)
        status, out, err = run("fix", mesh, "-o", fixed, "--json")
        self.assertEqual(status, 0, err)
        report = json.loads(out)
        self.assertEqual(set(report),
                         {"pairs_before", "pairs_after", "iterations", "iterations_to_clean",
                          "max_edge_strain", "seconds", "stage_seconds"})
        self.assertEqual(set(report["stage_seconds"]),
                         {"detection", "analysis", "response", "solver", "proximity"})
        self.assertTrue(1 <= report["iterations_to_clean"] <= report["iterations"])
        self.assertLessEqual(sum(report["stage_seconds"][k] for k in ("detection", "analysis", "response", "solver")),
                             report["seconds"])
        points_out, triangles_out = read_obj(fixed)
        # Same vertices in the same order, same faces; the unused vertex did not move.
        self.assertEqual(triangles_out, triangles_in)
        self.assertEqual(len(points_out), len(points_in))
        self.assertEqual(points_out[0], unused[0])
        self.assertEqual(report["pairs_before"], pairs_in)
        self.assertEqual(report["pairs_after"], brute_force(points_out, triangles_out)[0])
        self.assertEqual(report["pairs_after"], 0)
        self.assertGreaterEqual(report["iterations"], 1)
        self.assertAlmostEqual(report["max_edge_strain"],
                               edge_strain(as_float32(points_in), points_out, triangles_in),
                               delta=1e-5)
        self.assertLess(report["max_edge_strain"], 0.05)

    def test_fix_text_output_and_methods(self):
        mesh, fixed = self.path("in.obj"), self.path("out.obj")
        write_obj(mesh, crossing_sheets())
        pairs, _ = brute_force(*read_obj(mesh))
        for method in ("icm", "kikuchi", "ye", "buffet"):
            status, out, err = run("fix", mesh, "-o", fixed, "--method", method,
                                   "--max-iterations", "20")
            self.assertEqual(status, 0, method + err)
            self.assertRegex(out, r"%d intersecting pairs -> \d+ in \d+ iterations? \(%s\)"
                             % (pairs, method))
            self.assertIn("wrote " + fixed, out)


class Bake(Temp):
    def test_bake_every_frame(self):
        unused = [[9.0, 9.0, 9.0]]
        topology, cache, baked = self.path("t.obj"), self.path("in.pc2"), self.path("out.pc2")
        write_obj(topology, bump_through_sheet(), unused=unused)
        points, triangles = read_obj(topology)
        # The bump grows through the upper sheet: clean, tangled, more tangled.
        frames = []
        for height in (0.03, 0.1, 0.12):
            frame_points, _ = concat(bump_through_sheet(height))
            frames.append(unused + frame_points)
        write_pc2(cache, frames, start=4.0, sampling=1.0)
        status, out, err = run("bake", topology, cache, "-o", baked, "--json")
        self.assertEqual(status, 0, err)
        report = json.loads(out)
        self.assertEqual(set(report), {"frames", "pairs_in", "pairs_out", "iterations",
                                       "max_edge_strain", "seconds_per_frame", "seconds",
                                       "stage_seconds"})
        # The stages are parts of the frames' time, summed over the frames.
        stages = report["stage_seconds"]
        self.assertEqual(set(stages), {"detection", "analysis", "response", "solver", "proximity"})
        self.assertTrue(all(value >= 0 for value in stages.values()))
        self.assertLessEqual(stages["proximity"], stages["solver"])
        self.assertLessEqual(sum(stages.values()) - stages["proximity"], report["seconds"])
        self.assertEqual(report["frames"], 3)
        expected_in = [brute_force(as_float32(f), triangles)[0] for f in frames]
        self.assertEqual(report["pairs_in"], expected_in)
        self.assertEqual(expected_in[0], 0)
        self.assertGreater(expected_in[1], 0)

        result = read_pc2(baked)
        self.assertEqual(result["signature"], b"POINTCACHE2\0")
        self.assertEqual(result["version"], 1)
        self.assertEqual(result["vertices"], len(points))
        self.assertEqual((result["start"], result["sampling"]), (4.0, 1.0))
        self.assertEqual(len(result["frames"]), 3)
        worst = 0.0
        for f, frame in enumerate(result["frames"]):
            self.assertEqual(frame[0], unused[0])
            self.assertEqual(report["pairs_out"][f], brute_force(frame, triangles)[0])
            worst = max(worst, edge_strain(as_float32(frames[f]), frame, triangles))
        self.assertEqual(report["pairs_out"], [0, 0, 0])
        self.assertAlmostEqual(report["max_edge_strain"], worst, delta=1e-5)

    def test_bake_text_output(self):
        pieces = bump_through_sheet()
        topology, cache, baked = self.path("t.obj"), self.path("in.pc2"), self.path("out.pc2")
        write_obj(topology, pieces)
        points, _ = concat(pieces)
        write_pc2(cache, [points, points])
        status, out, err = run("bake", topology, cache, "-o", baked, "--independent",
                               "--max-iterations", "50")
        self.assertEqual(status, 0, err)
        self.assertEqual(len(re.findall(r"^frame\s+\d+\s+pairs", out, re.M)), 2)
        self.assertIn("wrote " + baked, out)


def interrupted_run(args, after_seconds):
    """Starts the program, sends Ctrl-C (SIGINT) after a while; returns (status, stderr)."""
    process = subprocess.Popen([CLI, *map(str, args)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        process.wait(timeout=after_seconds)
        raise AssertionError("finished before the interrupt; make the job longer")
    except subprocess.TimeoutExpired:
        pass
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=300)
    return process.returncode, err


class Interrupt(Temp):
    """Ctrl-C stops long work with status 130 and leaves valid, shorter output files."""

    def test_run_closes_its_cache(self):
        pc2 = self.path("long.pc2")
        status, err = interrupted_run(("run", "two-sheets", "--frames", "1000000", "--pc2", pc2),
                                      3)
        self.assertEqual(status, 130, err)
        self.assertIn("interrupted after", err)
        cache = read_pc2(pc2)  # checks that the size matches the patched frame count
        self.assertGreaterEqual(len(cache["frames"]), 1)

    def test_bake_writes_the_finished_frames(self):
        topology, cache, baked = self.path("t.obj"), self.path("in.pc2"), self.path("out.pc2")
        pieces = bump_through_sheet()
        write_obj(topology, pieces)
        points, _ = concat(pieces)
        write_pc2(cache, [points] * 3000)
        status, err = interrupted_run(("bake", topology, cache, "-o", baked, "--independent"), 3)
        self.assertEqual(status, 130, err)
        self.assertIn("interrupted", err)
        result = read_pc2(baked)
        self.assertLess(len(result["frames"]), 3000)


class Run(Temp):
    KEYS = {"frames", "pairs_per_frame", "final_pairs", "mean_pairs_last_half", "max_edge_strain",
            "seconds_per_frame"}

    def test_json_summary(self):
        status, out, err = run("run", "tangled-start", "--frames", "3", "--json")
        self.assertEqual(status, 0, err)
        summary = json.loads(out)
        self.assertEqual(set(summary), self.KEYS)
        pairs = summary["pairs_per_frame"]
        self.assertEqual(summary["frames"], 3)
        self.assertEqual(len(pairs), 3)
        self.assertGreater(pairs[0], 0)  # the scene starts tangled (SPEC)
        self.assertEqual(summary["final_pairs"], pairs[-1])
        self.assertAlmostEqual(summary["mean_pairs_last_half"], sum(pairs[1:]) / 2)
        self.assertGreaterEqual(summary["max_edge_strain"], 0)
        self.assertGreater(summary["seconds_per_frame"], 0)

    def test_plain_output_has_one_line_per_frame(self):
        status, out, err = run("run", "two-sheets", "--frames", "4", "--no-untangle")
        self.assertEqual(status, 0, err)
        lines = re.findall(r"^frame\s+(\d+)\s+pairs\s+(\d+)\s+contours\s+(\d+) \(loop (\d+), "
                           r"boundary (\d+), crease (\d+)\)\s+[\d.]+ ms$", out, re.M)
        self.assertEqual([int(line[0]) for line in lines], [1, 2, 3, 4])
        for line in lines:
            self.assertEqual(int(line[2]), int(line[3]) + int(line[4]) + int(line[5]))
        self.assertIn("untangling off", out)

    def test_files_agree_with_the_summary(self):
        csv, pc2, objdir = self.path("run.csv"), self.path("run.pc2"), self.path("obj")
        status, out, err = run("run", "two-sheets", "--frames", "3", "--json", "--csv", csv,
                               "--pc2", pc2, "--obj-dir", objdir)
        self.assertEqual(status, 0, err)
        summary = json.loads(out)
        with open(csv) as f:
            rows = [line.strip().split(",") for line in f]
        self.assertEqual(rows[0][:2], ["frame", "pairs"])
        self.assertEqual([int(r[1]) for r in rows[1:]], summary["pairs_per_frame"])
        self.assertEqual([int(r[0]) for r in rows[1:]], [1, 2, 3])
        cache = read_pc2(pc2)
        self.assertEqual(cache["vertices"], 2 * 22 * 22)
        self.assertEqual(len(cache["frames"]), 4)  # the initial state and 3 frames
        points, faces = read_obj(os.path.join(objdir, "two-sheets.obj"))
        self.assertEqual(len(points), cache["vertices"])
        self.assertEqual(as_float32(points), cache["frames"][0])
        self.assertEqual(len(faces), 2 * 21 * 21)
        self.assertNotEqual(cache["frames"][3], cache["frames"][0])  # the sheets fall

    def test_thread_count_does_not_change_the_run(self):
        outputs = []
        for threads in ("1", "2"):
            pc2 = self.path("t%s.pc2" % threads)
            status, out, err = run("run", "two-sheets", "--frames", "3", "--json", "--threads",
                                   threads, "--pc2", pc2)
            self.assertEqual(status, 0, err)
            with open(pc2, "rb") as f:
                outputs.append((json.loads(out)["pairs_per_frame"], f.read()))
        self.assertEqual(outputs[0], outputs[1])


if __name__ == "__main__":
    if not CLI or not os.access(CLI, os.X_OK):
        sys.exit("set UNTANGLE_CLI to the untangle program")
    unittest.main()
