"""Every bad-input row of the C ABI, through native.py: the documented status, a message that
names the problem, and nothing changed by the failed call."""

import ctypes
import math
import unittest

import numpy as np

from support import horizontal_sheet, native, no_gravity, vertical_sheet


def piece(positions, sizes, indices, inverse_mass=None):
    return native.Piece(np.asarray(positions, dtype=np.float32).reshape(-1, 3),
                        np.asarray(sizes, dtype=np.uint32), np.asarray(indices, dtype=np.uint32),
                        inverse_mass)


QUAD = [0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0]


class BadInput(unittest.TestCase):
    def assertFails(self, status, fragments, function, *args, **kwargs):
        with self.assertRaises(native.UntangleError) as caught:
            function(*args, **kwargs)
        self.assertEqual(caught.exception.status, status, caught.exception.message)
        for fragment in fragments:
            self.assertIn(fragment, caught.exception.message)
        return caught.exception

    def test_null_handle(self):
        lib = native.load()
        self.assertEqual(lib.ut_world_step(None, 1), native.UT_ERROR_INVALID_ARGUMENT)
        self.assertIn("world is NULL", lib.last_error())

    def test_null_arrays(self):
        self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["positions is None"], native.World,
                         [native.Piece(None, np.array([3], np.uint32), np.array([0, 1, 2], np.uint32))])
        lib = native.load()
        scene = ctypes.c_void_p()
        lib.check(lib.ut_scene_create(ctypes.byref(scene)))
        try:
            sizes = (ctypes.c_uint32 * 1)(3)
            indices = (ctypes.c_uint32 * 3)(0, 1, 2)
            status = lib.ut_scene_add_piece(scene, None, 3, 0, sizes, 1, indices, 3, None)
            self.assertEqual(status, native.UT_ERROR_INVALID_ARGUMENT)
            self.assertIn("positions is NULL", lib.last_error())
            count = ctypes.c_size_t(7)
            lib.check(lib.ut_scene_piece_count(scene, ctypes.byref(count)))
            self.assertEqual(count.value, 0)
        finally:
            lib.ut_scene_destroy(scene)

    def test_zero_vertices_or_faces(self):
        self.assertFails(native.UT_ERROR_INVALID_MESH, ["no vertices"], native.World,
                         [piece([], [], [])])
        self.assertFails(native.UT_ERROR_INVALID_MESH, ["no faces"], native.World,
                         [piece(QUAD, [], [])])
        self.assertFails(native.UT_ERROR_INVALID_MESH, [], native.World, [])

    def test_index_out_of_range(self):
        bad = horizontal_sheet()
        bad.face_indices = bad.face_indices.copy()
        bad.face_indices[4 * 17 + 2] = 2048
        self.assertFails(native.UT_ERROR_INVALID_MESH, ["face 17 uses vertex 2048", "121 vertices"],
                         native.World, [bad])
        self.assertFails(native.UT_ERROR_INVALID_MESH, ["piece 1", "face 17"], native.World,
                         [horizontal_sheet(), bad])
        self.assertFails(native.UT_ERROR_INVALID_MESH, ["2048"], native.detect, [bad])

    def test_bad_faces(self):
        self.assertFails(native.UT_ERROR_INVALID_MESH, ["face 1 has 2 corners"], native.World,
                         [piece(QUAD, [3, 2], [0, 1, 2, 2, 3])])
        self.assertFails(native.UT_ERROR_INVALID_MESH, ["face 0 uses vertex 1 more than once"],
                         native.untangle, [piece(QUAD, [4], [0, 1, 1, 3])])
        self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["add up to 3 corners, but 2"],
                         native.World, [piece(QUAD, [3], [0, 1])])
        negative = native.Piece(np.array(QUAD, np.float32).reshape(-1, 3), np.array([3]),
                                np.array([0, -1, 2]))
        self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["non-negative"], native.World, [negative])
        # 2**32 + 1 would wrap round to vertex 1, a valid index
        wrapping = native.Piece(np.array(QUAD, np.float32).reshape(-1, 3), np.array([3]),
                                np.array([0, 2**32 + 1, 2], np.int64))
        self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["4294967297", "largest index"],
                         native.World, [wrapping])

    def test_non_finite_positions(self):
        for bad in (math.nan, math.inf, -math.inf):
            sheet = horizontal_sheet()
            sheet.positions = sheet.positions.copy()
            sheet.positions[42, 1] = bad
            self.assertFails(native.UT_ERROR_INVALID_MESH, ["vertex 42", "non-finite"],
                             native.World, [sheet])
            self.assertFails(native.UT_ERROR_INVALID_MESH, ["vertex 42"], native.detect, [sheet])

    def test_zero_area_triangles_are_accepted_and_reported(self):
        sliver = piece([0.05, 0.07, -0.5, 0.05, 0.07, 0.0, 0.05, 0.07, 0.5], [3], [0, 1, 2])
        result = native.detect([horizontal_sheet(), sliver])
        self.assertEqual(result["degenerate_triangles"], 1)
        self.assertEqual(result["pairs"], 0)
        with native.World([horizontal_sheet(), sliver], no_gravity()) as world:
            world.step(2)
            self.assertEqual(world.stats()["degenerate_triangles"], 1)

    def test_non_manifold_edges_are_accepted_and_reported(self):
        book = piece([0, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 1, -0.5, 0.8, 0, -0.5, 0.8, 1, -0.5, -0.8, 0, -0.5, -0.8, 1],
                     [4, 4, 4], [0, 2, 3, 1, 0, 4, 5, 1, 0, 6, 7, 1])
        with native.World([book], no_gravity()) as world:
            world.detect()
            self.assertEqual(world.stats()["non_manifold_edges"], 1)
            world.step(2)

    def test_positions_of_the_wrong_length(self):
        with native.World([horizontal_sheet(), vertical_sheet()], no_gravity()) as world:
            before = world.positions()
            self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["120 vertices, but piece 0 has 121"],
                             world.set_positions, np.zeros((120, 3), np.float32), 0)
            self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["188 vertices, but the world has 187"],
                             world.set_positions, np.zeros((188, 3), np.float32))
            self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["shape (n, 3)"],
                             world.set_positions, np.zeros((187, 2), np.float32))
            self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["piece 2 does not exist"],
                             world.positions, 2)
            with_nan = before.copy()
            with_nan[7, 0] = np.nan
            self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["vertex 7 is not finite"],
                             world.set_positions, with_nan)
            np.testing.assert_array_equal(world.positions(), before)

    def test_settings_struct_of_a_smaller_size(self):
        lib = native.load()
        older = native._UtSettings()
        lib.check(lib.ut_settings_init(ctypes.byref(older), ctypes.sizeof(older)))
        older.struct_size = native._UtSettings.thickness.offset
        older.response_strength = 3.0
        older.thickness = -5.0  # beyond its size: must not be read
        with native.World([horizontal_sheet()]) as world:
            lib.check(lib.ut_world_set_settings(world._handle, ctypes.byref(older)))
            read = world.scene_settings()
        self.assertEqual(read.response_strength, 3.0)
        self.assertEqual(read.thickness, native.Settings.defaults().thickness)
        newer = native._UtSettings()
        self.assertEqual(lib.ut_settings_init(ctypes.byref(newer), ctypes.sizeof(newer) + 8),
                         native.UT_ERROR_INVALID_ARGUMENT)
        self.assertIn("struct_size", lib.last_error())

    def test_absurd_settings(self):
        with native.World([horizontal_sheet()], no_gravity()) as world:
            before = world.scene_settings()
            for field, value in (("thickness", -2.0), ("thickness", 1e9), ("thickness", math.nan),
                                 ("response_strength", -1.0), ("response_strength", 1e12),
                                 ("iterations", -3), ("iterations", 2_000_000_000),
                                 ("threads", -1), ("time_step", 0.0)):
                spoiled = native.Settings.defaults()
                setattr(spoiled, field, value)
                self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, [field], world.set_settings, spoiled)
                self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, [field], native.World,
                                 [horizontal_sheet()], spoiled)
            self.assertEqual(world.scene_settings(), before)
        self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["max_iterations"], native.untangle,
                         [horizontal_sheet()], max_iterations=-5)

    def test_grab_move_without_grab_begin(self):
        with native.World([horizontal_sheet()], no_gravity()) as world:
            before = world.positions()
            self.assertFails(native.UT_ERROR_INVALID_OPERATION, ["grab_begin"], world.grab_move,
                             (0, 0, 1), (0, 0, 1))
            self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["zero vector"], world.grab_begin,
                             (0, 0, 1), (0, 0, 0), 0.1)
            np.testing.assert_array_equal(world.positions(), before)

    def test_stepping_after_a_failed_create(self):
        bad = horizontal_sheet()
        bad.face_indices = bad.face_indices.copy()
        bad.face_indices[0] = 5000
        self.assertFails(native.UT_ERROR_INVALID_MESH, ["5000"], native.World, [bad])
        lib = native.load()
        handle = ctypes.c_void_p(1234)
        status = lib.ut_world_create_scene(b"nope", None, ctypes.byref(handle))
        self.assertEqual(status, native.UT_ERROR_INVALID_ARGUMENT)
        self.assertIn("nope", lib.last_error())
        self.assertIsNone(handle.value)  # reset to NULL by the failed create
        self.assertEqual(lib.ut_world_step(handle, 10), native.UT_ERROR_INVALID_ARGUMENT)
        self.assertIn("world is NULL", lib.last_error())
        self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["nope"], native.World.from_scene, "nope")

    def test_bad_inverse_mass(self):
        sheet = horizontal_sheet()
        sheet.inverse_mass = np.ones(121, np.float32)
        sheet.inverse_mass[9] = -1
        self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["inverse mass of vertex 9"], native.World, [sheet])
        sheet.inverse_mass = np.ones(120, np.float32)
        self.assertFails(native.UT_ERROR_INVALID_ARGUMENT, ["inverse_mass"], native.World, [sheet])


if __name__ == "__main__":
    unittest.main()
