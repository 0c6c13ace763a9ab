"""`untangle bake`: every frame of a PC2 cache untangled, checked by the brute-force test, and
the report.

Run: UNTANGLE_CLI=build/<preset>/cli/untangle /usr/bin/python3 tests/cli/test_cli_bake.py [Class]
"""

import json
import re

from cli_support import (
    Temp,
    as_float32,
    brute_force,
    bump_through_sheet,
    concat,
    edge_strain,
    main,
    read_obj,
    read_pc2,
    run,
    write_obj,
    write_pc2,
)


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
        self.assertEqual(set(stages), {"detection", "analysis", "response", "solver", "proximity",
                                       "strain_limit"})
        self.assertTrue(all(value >= 0 for value in stages.values()))
        self.assertLessEqual(stages["proximity"] + stages["strain_limit"], stages["solver"])
        self.assertLessEqual(sum(stages.values()) - stages["proximity"] - stages["strain_limit"],
                             report["seconds"])
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


if __name__ == "__main__":
    main()
