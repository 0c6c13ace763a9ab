"""World: a running frame pipeline (UtWorld) built from pieces or a named scene, stepped,
read and written through the C ABI. No bpy import."""

from __future__ import annotations

import ctypes
from ctypes import byref, c_float, c_int32, c_size_t, c_uint32, c_uint8, c_void_p
from typing import Optional, Sequence

import numpy as np

from .abi import _FLOAT_P, _NO_PARTICLE, _P, _U32_P, _UtFrameStats, _UtSettings
from .loader import load
from .convert import (
    _c_settings,
    _invalid,
    Piece,
    _piece_arg,
    _Scene,
    Settings,
    _stats_dict,
    _vec3,
    _xyz_array,
)


class World:
    """A running frame pipeline (UtWorld). Close it (or use `with`) to free it early."""

    def __init__(
        self,
        pieces: Sequence[Piece],
        settings: Optional[Settings] = None,
        spheres=(),
        ground_height: Optional[float] = None,
    ):
        self._lib = load()
        self._handle = c_void_p()
        with _Scene(pieces, spheres, ground_height) as scene:
            handle = c_void_p()
            self._lib.check(self._lib.ut_world_create(scene.handle, _c_settings(settings), byref(handle)))
        self._handle = handle
        self._read_counts()

    @classmethod
    def from_scene(cls, name: str, settings: Optional[Settings] = None) -> "World":
        world = cls.__new__(cls)
        world._lib = load()
        world._handle = c_void_p()
        if not isinstance(name, str):
            raise _invalid(f"scene name must be a string, got {name!r}")
        handle = c_void_p()
        world._lib.check(
            world._lib.ut_world_create_scene(name.encode(), _c_settings(settings), byref(handle))
        )
        world._handle = handle
        world._read_counts()
        return world

    def _read_counts(self) -> None:
        count = c_size_t()
        self._lib.check(self._lib.ut_world_piece_count(self._handle, byref(count)))
        self.piece_count = count.value
        self._vertex_counts = []
        for piece in range(self.piece_count):
            self._lib.check(self._lib.ut_world_vertex_count(self._handle, piece, byref(count)))
            self._vertex_counts.append(count.value)
        self.vertex_count = sum(self._vertex_counts)
        self.grabbed_particle = None

    # Lifetime ---------------------------------------------------------------------------------

    def close(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle:
            self._lib.ut_world_destroy(handle)
            self._handle = c_void_p()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self) -> bool:
        return not self._handle

    # Topology and colliders -------------------------------------------------------------------

    def piece_vertex_counts(self) -> list:
        return list(self._vertex_counts)

    def _count_of(self, piece: Optional[int]) -> int:
        if piece is None:
            return self.vertex_count
        if 0 <= piece < self.piece_count:
            return self._vertex_counts[piece]
        return 0  # the library names the bad piece index

    def faces(self, piece: int) -> tuple:
        lib, piece_arg = self._lib, _piece_arg(piece)
        face_count, index_count = c_size_t(), c_size_t()
        lib.check(
            lib.ut_world_piece_faces(
                self._handle, piece_arg, None, 0, byref(face_count), None, 0, byref(index_count)
            )
        )
        sizes = np.empty(face_count.value, dtype=np.uint32)
        indices = np.empty(index_count.value, dtype=np.uint32)
        lib.check(
            lib.ut_world_piece_faces(
                self._handle,
                piece_arg,
                sizes.ctypes.data_as(_U32_P),
                sizes.size,
                byref(face_count),
                indices.ctypes.data_as(_U32_P),
                indices.size,
                byref(index_count),
            )
        )
        return sizes, indices

    def spheres(self) -> list:
        """The sphere colliders as ((x, y, z), radius)."""
        count = c_size_t()
        self._lib.check(self._lib.ut_world_colliders(self._handle, None, 0, byref(count), None, None))
        data = np.empty((count.value, 4), dtype=np.float32)
        self._lib.check(
            self._lib.ut_world_colliders(
                self._handle, data.ctypes.data_as(_FLOAT_P), count.value, byref(count), None, None
            )
        )
        return [((float(x), float(y), float(z)), float(r)) for x, y, z, r in data]

    def ground_height(self) -> Optional[float]:
        """The ground plane's height, or None when the world has no ground."""
        has_ground, height = c_int32(), c_float()
        self._lib.check(
            self._lib.ut_world_colliders(self._handle, None, 0, None, byref(has_ground), byref(height))
        )
        return float(height.value) if has_ground.value else None

    # Settings ---------------------------------------------------------------------------------

    def scene_settings(self) -> Settings:
        c = _UtSettings()
        c.struct_size = ctypes.sizeof(_UtSettings)
        self._lib.check(self._lib.ut_world_get_settings(self._handle, byref(c)))
        return Settings._from_c(c)

    settings = scene_settings

    def set_settings(self, settings: Settings) -> None:
        if not isinstance(settings, Settings):
            raise _invalid(f"settings must be a Settings, got {type(settings).__name__}")
        self._lib.check(self._lib.ut_world_set_settings(self._handle, byref(settings._to_c())))

    # Stepping ---------------------------------------------------------------------------------

    def step(self, frames: int = 1) -> None:
        if not isinstance(frames, (int, np.integer)) or not 0 <= frames < 2**32:
            raise _invalid(f"frames must be an integer in [0, 2^32), got {frames!r}")
        self._lib.check(self._lib.ut_world_step(self._handle, int(frames)))

    def detect(self) -> None:
        self._lib.check(self._lib.ut_world_detect(self._handle))

    # Positions --------------------------------------------------------------------------------

    def _get_xyz(self, function, piece: Optional[int]) -> np.ndarray:
        piece_arg = _piece_arg(piece)
        out = np.empty((self._count_of(piece), 3), dtype=np.float32)
        self._lib.check(function(self._handle, piece_arg, out.ctypes.data_as(_FLOAT_P), out.shape[0], 0))
        return out

    def _set_xyz(self, function, values, piece: Optional[int], what: str) -> None:
        piece_arg = _piece_arg(piece)
        array = _xyz_array(values, what)
        self._lib.check(
            function(
                self._handle,
                piece_arg,
                array.ctypes.data_as(_FLOAT_P) if array.size else None,
                array.shape[0],
                array.strides[0],
            )
        )

    def positions(self, piece: Optional[int] = None) -> np.ndarray:
        return self._get_xyz(self._lib.ut_world_get_positions, piece)

    def set_positions(self, positions, piece: Optional[int] = None) -> None:
        self._set_xyz(self._lib.ut_world_set_positions, positions, piece, "positions")

    def velocities(self, piece: Optional[int] = None) -> np.ndarray:
        return self._get_xyz(self._lib.ut_world_get_velocities, piece)

    def set_velocities(self, velocities, piece: Optional[int] = None) -> None:
        self._set_xyz(self._lib.ut_world_set_velocities, velocities, piece, "velocities")

    # Results of the last frame ------------------------------------------------------------------

    def stats(self) -> dict:
        s = _UtFrameStats()
        s.struct_size = ctypes.sizeof(_UtFrameStats)
        self._lib.check(self._lib.ut_world_stats(self._handle, byref(s)))
        return _stats_dict(s)

    def contours(self) -> tuple:
        lib = self._lib
        point_count, contour_count = c_size_t(), c_size_t()
        lib.check(
            lib.ut_world_contours(
                self._handle, None, 0, byref(point_count), None, None, 0, byref(contour_count)
            )
        )
        points = np.empty((point_count.value, 3), dtype=np.float32)
        offsets = np.empty(contour_count.value + 1, dtype=np.uint32)
        types = np.empty(contour_count.value, dtype=np.uint8)
        lib.check(
            lib.ut_world_contours(
                self._handle,
                points.ctypes.data_as(_FLOAT_P),
                points.shape[0],
                byref(point_count),
                offsets.ctypes.data_as(_U32_P),
                types.ctypes.data_as(_P(c_uint8)),
                types.size,
                byref(contour_count),
            )
        )
        return points, offsets, types

    def culled_boxes(self) -> np.ndarray:
        count = c_size_t()
        self._lib.check(self._lib.ut_world_culled_boxes(self._handle, None, 0, byref(count)))
        boxes = np.empty((count.value, 2, 3), dtype=np.float32)
        self._lib.check(
            self._lib.ut_world_culled_boxes(
                self._handle, boxes.ctypes.data_as(_FLOAT_P), count.value, byref(count)
            )
        )
        return boxes

    def intersecting_faces(self) -> list:
        result = []
        count = c_size_t()
        for piece in range(self.piece_count):
            self._lib.check(self._lib.ut_world_intersecting_faces(self._handle, piece, None, 0, byref(count)))
            faces = np.empty(count.value, dtype=np.uint32)
            self._lib.check(
                self._lib.ut_world_intersecting_faces(
                    self._handle, piece, faces.ctypes.data_as(_U32_P), faces.size, byref(count)
                )
            )
            result.append(faces)
        return result

    # Grab ---------------------------------------------------------------------------------------

    def grab_begin(self, origin, direction, pick_radius: float) -> bool:
        particle = c_uint32(_NO_PARTICLE)
        self._lib.check(
            self._lib.ut_world_grab_begin(
                self._handle,
                _vec3(origin, "origin"),
                _vec3(direction, "direction"),
                float(pick_radius),
                byref(particle),
            )
        )
        self.grabbed_particle = None if particle.value == _NO_PARTICLE else particle.value
        return self.grabbed_particle is not None

    def grab_move(self, target, plane_normal) -> None:
        self._lib.check(
            self._lib.ut_world_grab_move(
                self._handle, _vec3(target, "target"), _vec3(plane_normal, "plane_normal")
            )
        )

    def grab_end(self) -> None:
        self._lib.check(self._lib.ut_world_grab_end(self._handle))
        self.grabbed_particle = None
