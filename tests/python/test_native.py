"""native.py against the built library: loading, settings, worlds, results read back as numpy,
the untangler with progress callbacks, sequences and detect-only. Each test checks a property
against a hand-built configuration (see support.py), not against earlier output."""

import hashlib
import os
import sys
import unittest

import numpy as np

from support import horizontal_sheet, load_addon_module, native, no_gravity, poking_corner, vertical_sheet


class Loading(unittest.TestCase):
    def test_environment_variable_comes_first(self):
        candidates = native.library_path_candidates()
        self.assertEqual(candidates[0], os.environ["CLOTH_UNTANGLE_LIB"])
        self.assertTrue(any(c.endswith(os.path.join("lib", "libuntangle.so")) for c in candidates))

    def test_missing_library_lists_every_path_tried(self):
        with self.assertRaises(native.LibraryNotFound) as caught:
            native.load("/nonexistent/libuntangle.so")
        self.assertIn("/nonexistent/libuntangle.so: no such file", caught.exception.message)
        self.assertIsInstance(caught.exception, native.UntangleError)

    def test_a_file_that_is_not_a_library_is_reported(self):
        with self.assertRaises(native.LibraryNotFound) as caught:
            native.load(os.path.abspath(__file__))
        self.assertIn(os.path.abspath(__file__), caught.exception.message)

    def test_another_major_version_is_refused(self):
        loader = load_addon_module("loader")  # where load() reads the major version it speaks
        saved = loader.ABI_MAJOR
        loader.ABI_MAJOR = saved + 1
        try:
            with self.assertRaises(native.UntangleError) as caught:
                native.load(os.environ["CLOTH_UNTANGLE_LIB"])
            self.assertIn("needs major version", caught.exception.message)
        finally:
            loader.ABI_MAJOR = saved

    def test_openmp_waits_passively_unless_told_otherwise(self):
        """libgomp's own report of its settings (OMP_DISPLAY_ENV=VERBOSE, printed when it starts)
        shows no spinning (GOMP_SPINCOUNT 0; unset it would be 300000) when OMP_WAIT_POLICY was
        unset before loading, and the user's policy when it was set."""
        import subprocess

        script = (
            "import sys; sys.path.insert(0, sys.argv[1]); from support import native; "
            "native.load(); print(native.get_threads())"
        )
        here = os.path.dirname(os.path.abspath(__file__))
        for given, expected in ((None, "GOMP_SPINCOUNT = '0'"), ("ACTIVE", "OMP_WAIT_POLICY = 'ACTIVE'")):
            environment = dict(os.environ, OMP_DISPLAY_ENV="VERBOSE")
            environment.pop("OMP_WAIT_POLICY", None)
            if given is not None:
                environment["OMP_WAIT_POLICY"] = given
            run = subprocess.run([sys.executable, "-c", script, here], env=environment,
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 0, run.stderr)
            self.assertIn(expected, run.stderr)

    def test_version_and_no_bpy(self):
        self.assertEqual(native.abi_version()[0], 1)
        self.assertNotIn("bpy", sys.modules)


class SettingsTests(unittest.TestCase):
    def test_defaults_are_the_spec_defaults(self):
        s = native.Settings.defaults()
        self.assertEqual(s.method, "icm")
        self.assertTrue(s.untangle)
        self.assertEqual(s.iterations, 10)
        self.assertAlmostEqual(s.time_step, 1 / 60)
        self.assertEqual(s.gravity, (0.0, 0.0, -9.81))

    def test_scene_settings(self):
        self.assertAlmostEqual(native.Settings.of_scene("dropped-cloth").thickness, 0.02)

    def test_unknown_method(self):
        s = native.Settings.defaults()
        s.method = "magic"
        with self.assertRaises(native.UntangleError) as caught:
            native.World([horizontal_sheet()], s)
        self.assertEqual(caught.exception.status, native.UT_ERROR_INVALID_ARGUMENT)
        self.assertIn("magic", caught.exception.message)

    def test_round_trip_through_a_world(self):
        s = no_gravity()
        s.method, s.response_strength, s.thickness, s.iterations = "kikuchi", 2.5, 0.03, 12
        with native.World([horizontal_sheet()], s) as world:
            read = world.scene_settings()
        self.assertEqual((read.method, read.response_strength, read.thickness, read.iterations),
                         ("kikuchi", 2.5, 0.03, 12))


class WorldTests(unittest.TestCase):
    def crossing(self):
        return native.World([horizontal_sheet(), vertical_sheet()], no_gravity())

    def test_counts_and_faces(self):
        a, b = horizontal_sheet(), vertical_sheet()
        with native.World([a, b], no_gravity()) as world:
            self.assertEqual(world.piece_count, 2)
            self.assertEqual(world.vertex_count, 121 + 66)
            self.assertEqual(world.piece_vertex_counts(), [121, 66])
            sizes, indices = world.faces(1)
            np.testing.assert_array_equal(sizes, b.face_sizes)
            np.testing.assert_array_equal(indices, b.face_indices)

    def test_crossing_gives_one_boundary_contour_on_the_line(self):
        with self.crossing() as world:
            world.detect()
            stats = world.stats()
            points, offsets, types = world.contours()
        self.assertEqual(stats["contours"], {"loop": 0, "boundary": 1, "crease": 0})
        self.assertGreater(stats["pairs"], 0)
        for key in ("refit", "broad", "narrow", "contours", "response", "solve", "total"):
            self.assertIn(key, stats["ms"])
        self.assertEqual(types.tolist(), [1])
        self.assertEqual(offsets.tolist(), [0, len(points)])
        self.assertEqual(points.dtype, np.float32)
        np.testing.assert_allclose(points[:, 0], 0.05, atol=1e-6)
        np.testing.assert_allclose(points[:, 2], 0.0, atol=1e-6)
        self.assertAlmostEqual(float(points[:, 1].min()), -0.55, places=5)
        self.assertAlmostEqual(float(points[:, 1].max()), 0.55, places=5)

    def test_intersecting_faces_are_the_crossed_cells(self):
        with self.crossing() as world:
            world.detect()
            faces = world.intersecting_faces()
        self.assertEqual(faces[0].tolist(), [r * 10 + 5 for r in range(2, 8)])
        self.assertEqual(faces[1].tolist(), [20 + c for c in range(5)])
        self.assertEqual(faces[0].dtype, np.uint32)

    def test_culled_boxes_shape_and_count(self):
        with native.World([horizontal_sheet()], no_gravity()) as world:
            world.detect()
            boxes = world.culled_boxes()
            self.assertEqual(boxes.shape, (world.stats()["culled_nodes"], 2, 3))
        self.assertGreater(len(boxes), 0)
        self.assertTrue(np.all(boxes[:, 0] <= boxes[:, 1]))

    def test_positions_round_trip_for_one_piece_through_a_strided_view(self):
        a, b = horizontal_sheet(), vertical_sheet()
        with native.World([a, b], no_gravity()) as world:
            padded = np.zeros((66, 4), dtype=np.float32)  # xyz + padding, passed without a copy
            padded[:, :3] = b.positions + np.float32(0.25)
            padded[:, 3] = np.nan
            world.set_positions(padded[:, :3], piece=1)
            np.testing.assert_array_equal(world.positions(1), padded[:, :3])
            np.testing.assert_array_equal(world.positions(0), a.positions)
            everything = world.positions()
        self.assertEqual(everything.shape, (187, 3))
        self.assertTrue(everything.flags.c_contiguous)

    def test_flat_arrays_are_accepted(self):
        a = horizontal_sheet()
        with native.World([a], no_gravity()) as world:
            world.set_positions(a.positions.ravel() * 2)
            np.testing.assert_array_equal(world.positions(), a.positions * 2)

    def test_step_moves_a_falling_sheet_down(self):
        with native.World([horizontal_sheet()]) as world:  # default gravity
            world.step(5)
            self.assertEqual(world.stats()["frame"], 5)
            self.assertLess(float(world.positions()[:, 2].max()), 0.0)
            self.assertTrue(np.all(world.velocities()[:, 2] < 0))

    def test_grab_pulls_the_picked_vertex(self):
        with native.World([horizontal_sheet()], no_gravity()) as world:
            self.assertTrue(world.grab_begin((-0.4, 0.2, 5.0), (0, 0, -1), 0.05))
            self.assertEqual(world.grabbed_particle, 6 * 11 + 3)
            world.grab_move((-0.4, 0.2, 0.5), (1, 0, 0))
            world.step(5)
            self.assertGreater(float(world.positions()[6 * 11 + 3, 2]), 0.05)
            world.grab_end()
            self.assertFalse(world.grab_begin((50, 50, 5), (0, 0, -1), 0.05))

    def test_colliders(self):
        with native.World([horizontal_sheet()], spheres=[((0.5, -0.25, -2.0), 0.75)], ground_height=-3.0) as world:
            self.assertEqual(world.spheres(), [((0.5, -0.25, -2.0), 0.75)])
            self.assertEqual(world.ground_height(), -3.0)
        with native.World([horizontal_sheet()]) as world:
            self.assertIsNone(world.ground_height())

    def test_scene_worlds(self):
        for name, pieces, vertices in (("tangled-start", 1, 2500), ("two-sheets", 2, 968)):
            with native.World.from_scene(name) as world:
                self.assertEqual((world.piece_count, world.vertex_count), (pieces, vertices))
                sizes, indices = world.faces(0)
                self.assertEqual(int(sizes.sum()), len(indices))
        self.assertEqual(native.SCENES, ("tangled-start", "dropped-cloth", "two-sheets"))

    def test_scene_run_does_not_depend_on_the_thread_count(self):
        digests = []
        for threads in (1, 2):
            settings = native.Settings.of_scene("tangled-start")
            settings.threads = threads
            with native.World.from_scene("tangled-start", settings) as world:
                world.step(6)
                digests.append(hashlib.sha256(world.positions().tobytes()).hexdigest())
        self.assertEqual(digests[0], digests[1])

    def test_close_is_idempotent_and_the_closed_world_refuses_calls(self):
        world = native.World([horizontal_sheet()])
        world.close()
        world.close()
        self.assertTrue(world.closed)
        with self.assertRaises(native.UntangleError) as caught:
            world.step()
        self.assertEqual(caught.exception.status, native.UT_ERROR_INVALID_ARGUMENT)
        self.assertIn("world is NULL", caught.exception.message)


def detect_pairs(pieces, positions):
    """Detect-only on the pieces moved to `positions` (a list per piece)."""
    moved = [native.Piece(p, piece.face_sizes, piece.face_indices) for p, piece in zip(positions, pieces)]
    return native.detect(moved)["pairs"]


class UntangleTests(unittest.TestCase):
    def test_poking_corner_comes_out_free_and_inputs_are_untouched(self):
        pieces = poking_corner()
        before = [p.positions.copy() for p in pieces]
        calls = []
        out, report = native.untangle(pieces, progress=lambda i, n, pairs: calls.append((i, n, pairs)))
        self.assertEqual(report["pairs_before"], native.detect(pieces)["pairs"])
        self.assertGreater(report["pairs_before"], 0)
        self.assertEqual(report["pairs_after"], 0)
        self.assertFalse(report["cancelled"])
        self.assertEqual(len(calls), report["iterations"])
        self.assertTrue(all(n == 1000 for _, n, _ in calls))
        # The first clean state within the iterations; the stages' times (ABI 1.2) in the call's,
        # the proximity searches and the strain-limit sweeps (ABI 1.3) disjoint parts of the
        # solver's (the default strain limit runs its sweeps).
        self.assertTrue(1 <= report["iterations_to_clean"] <= report["iterations"])
        stages = report["stage_seconds"]
        self.assertGreater(stages["detection"], 0)
        self.assertGreater(stages["solver"], 0)
        self.assertLessEqual(stages["proximity"], stages["solver"])
        self.assertGreater(stages["strain_limit"], 0)
        self.assertLessEqual(stages["proximity"] + stages["strain_limit"], stages["solver"])
        self.assertLessEqual(stages["detection"] + stages["analysis"] + stages["response"] + stages["solver"],
                             report["seconds"])
        self.assertEqual([len(o) for o in out], [len(p.positions) for p in pieces])
        self.assertEqual(detect_pairs(pieces, out), 0)
        for original, piece in zip(before, pieces):
            np.testing.assert_array_equal(original, piece.positions)

    def test_strain_limit_bounds_the_polygon_sides_and_is_checked(self):
        pieces = poking_corner()
        out, report = native.untangle(pieces, strain_limit=0.002)  # 0.7 % without a limit
        self.assertEqual(report["pairs_after"], 0)
        worst = 0.0
        for piece, moved in zip(pieces, out):
            start = 0
            for size in piece.face_sizes:
                corners = piece.face_indices[start : start + size]
                for a, b in zip(corners, np.roll(corners, -1)):
                    before = np.linalg.norm(piece.positions[b] - piece.positions[a])
                    after = np.linalg.norm(moved[b] - moved[a])
                    worst = max(worst, abs(after / before - 1))
                start += size
        self.assertLessEqual(worst, 0.002 + 2e-4)
        with self.assertRaisesRegex(native.UntangleError, "strain_limit"):
            native.untangle(pieces, strain_limit=1.5)

    def test_progress_returning_false_cancels_without_raising(self):
        pieces = [horizontal_sheet(), vertical_sheet()]  # does not resolve: runs on
        out, report = native.untangle(pieces, progress=lambda i, n, pairs: i < 2)
        self.assertTrue(report["cancelled"])
        self.assertEqual(report["iterations"], 2)
        self.assertTrue(all(np.isfinite(o).all() for o in out))

    def test_exception_in_progress_cancels_and_is_reraised(self):
        class Stop(RuntimeError):
            pass

        seen = []

        def progress(i, n, pairs):
            seen.append(i)
            if i == 3:
                raise Stop("from the callback")
            return True

        with self.assertRaises(Stop):
            native.untangle([horizontal_sheet(), vertical_sheet()], progress=progress)
        self.assertEqual(seen[-1], 3)  # no call after the exception

    def test_rest_shape_and_pinned_vertices(self):
        flat, tilted = poking_corner()
        tilted.inverse_mass = np.zeros(len(tilted.positions), dtype=np.float32)
        out, report = native.untangle([flat, tilted], rest=[flat.positions, tilted.positions])
        np.testing.assert_array_equal(out[1], tilted.positions)

    def test_sequence(self):
        pieces = poking_corner()
        frames = np.stack([np.concatenate([p.positions for p in poking_corner(0.01 * f)]) for f in range(3)])
        out, reports = native.untangle_sequence(pieces, frames)
        self.assertEqual(out.shape, frames.shape)
        self.assertEqual(len(reports), 3)
        for f in range(3):
            self.assertEqual(reports[f]["pairs_after"], 0)
            split = [out[f, :289], out[f, 289:]]
            self.assertEqual(detect_pairs(pieces, split), 0)
        partial, partial_reports = native.untangle_sequence(pieces, frames, progress=lambda f, n, pairs: False)
        self.assertEqual(partial.shape, (1,) + frames.shape[1:])
        self.assertEqual(len(partial_reports), 1)
        np.testing.assert_array_equal(partial[0], out[0])

    def test_detect_only(self):
        result = native.detect([horizontal_sheet(), vertical_sheet()])
        self.assertEqual(result["contours"]["boundary"], 1)
        self.assertEqual(result["intersecting_faces"][0].tolist(), [r * 10 + 5 for r in range(2, 8)])
        self.assertEqual(result["intersecting_faces"][1].tolist(), [20 + c for c in range(5)])
        for key in ("pairs", "hits", "dropped_hits", "culled_nodes"):
            self.assertIn(key, result)
        no_cull = native.detect([horizontal_sheet(), vertical_sheet()], cull=False)
        self.assertEqual(no_cull["pairs"], result["pairs"])
        self.assertEqual(no_cull["culled_nodes"], 0)

    def test_threads(self):
        native.set_threads(1)
        self.assertEqual(native.get_threads(), 1)
        native.set_threads(0)


if __name__ == "__main__":
    unittest.main()
