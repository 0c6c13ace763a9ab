"""`untangle run`: the built-in scenes run headless, the JSON summary, the per-frame lines, the
CSV/PC2/OBJ files and their agreement, and the thread count not changing the run.

Run: UNTANGLE_CLI=build/<preset>/cli/untangle /usr/bin/python3 tests/cli/test_cli_run.py [Class]
"""

import json
import os
import re

from cli_support import (
    Temp,
    as_float32,
    main,
    read_obj,
    read_pc2,
    run,
)


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
    main()
