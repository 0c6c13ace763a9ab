"""`untangle detect`: the JSON keys, and the counts against the brute-force test and the
contours known by construction.

Run: UNTANGLE_CLI=build/<preset>/cli/untangle /usr/bin/python3 tests/cli/test_cli_detect.py [Class]
"""

import json

from cli_support import (
    Temp,
    brute_force,
    bump_through_sheet,
    concat,
    crossing_sheets,
    grid,
    main,
    run,
    tube_through_sheet,
    write_obj,
)


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


if __name__ == "__main__":
    main()
