"""The `untangle` program as a whole: --help on the program and every command, --version,
usage errors (exit status 2) and bad files (exit status 1), each with a message.

Run: UNTANGLE_CLI=build/<preset>/cli/untangle /usr/bin/python3 tests/cli/test_cli_usage.py [Class]
"""

import re
import struct

from cli_support import (
    COMMANDS,
    Temp,
    concat,
    crossing_sheets,
    main,
    run,
    write_obj,
    write_pc2,
)


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


if __name__ == "__main__":
    main()
