"""`untangle fix`: the output file keeps the input's vertices and faces and is free of
intersections by the brute-force test; its report, and every method.

Run: UNTANGLE_CLI=build/<preset>/cli/untangle /usr/bin/python3 tests/cli/test_cli_fix.py [Class]
"""

import json

from cli_support import (
    Temp,
    as_float32,
    brute_force,
    bump_through_sheet,
    crossing_sheets,
    edge_strain,
    main,
    read_obj,
    run,
    write_obj,
)


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
                         {"detection", "analysis", "response", "solver", "proximity",
                          "strain_limit"})
        # The proximity searches and the strain-limit sweeps (ABI 1.3) are disjoint parts of
        # the solver's time; the default strain limit runs its sweeps.
        stages = report["stage_seconds"]
        self.assertGreater(stages["strain_limit"], 0)
        self.assertLessEqual(stages["proximity"] + stages["strain_limit"], stages["solver"])
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



class Units(Temp):
    def test_thickness_in_the_meshs_units_gives_the_same_fix_at_any_scale(self):
        """The same tangle in metres and in millimetres: with --thickness 10 (a centimetre in
        millimetres) the millimetre fix is the metre fix scaled by 1000; with the default
        thickness (0.01, a centimetre in metres) it is not, and the program says so."""
        pieces = bump_through_sheet()
        in_mm = [(name, [[c * 1000 for c in p] for p in points], faces)
                 for name, points, faces in pieces]
        metres, millimetres = self.path("m.obj"), self.path("mm.obj")
        write_obj(metres, pieces)
        write_obj(millimetres, in_mm)
        outputs = {}
        for name, source, extra in (("m", metres, ()), ("mm", millimetres, ("--thickness", "10")),
                                    ("mm default", millimetres, ())):
            out = self.path(name.replace(" ", "_") + "_out.obj")
            status, stdout, err = run("fix", source, "-o", out, "--json", *extra)
            self.assertEqual(status, 0, err)
            self.assertEqual(json.loads(stdout)["pairs_after"], 0)
            # Only the millimetre mesh at the metre default gets the note on the units.
            self.assertEqual("--thickness in its units" in err, name == "mm default", err)
            points, triangles = read_obj(out)
            self.assertEqual(brute_force(points, triangles)[0], 0)
            outputs[name] = points

        def largest_difference(mm_points):
            return max(abs(x / 1000 - y) for p, q in zip(mm_points, outputs["m"])
                       for x, y in zip(p, q))

        self.assertLess(largest_difference(outputs["mm"]), 1e-4)  # measured 1.2e-7
        self.assertGreater(largest_difference(outputs["mm default"]), 1e-3)  # measured 0.024
        status, _, err = run("fix", metres, "-o", self.path("x.obj"), "--thickness", "-1")
        self.assertFails(status, 2, err, "--thickness")

if __name__ == "__main__":
    main()
