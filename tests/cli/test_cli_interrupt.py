"""Ctrl-C (SIGINT) during `untangle run` and `untangle bake`: exit status 130 and valid,
shorter output files.

Run: UNTANGLE_CLI=build/<preset>/cli/untangle /usr/bin/python3 tests/cli/test_cli_interrupt.py [Class]
"""

import signal
import subprocess

from cli_support import (
    CLI,
    Temp,
    bump_through_sheet,
    concat,
    main,
    read_pc2,
    write_obj,
    write_pc2,
)


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


if __name__ == "__main__":
    main()
