"""Python values to and from the C ABI's arguments: numpy arrays checked and viewed as float32
xyz or uint32 indices without copies beyond what the ABI needs, Settings, Piece and the scene
handle the library copies them into, and the stats/report structs as dicts. No bpy import."""

from __future__ import annotations

import ctypes
from ctypes import byref, c_float, c_void_p
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from .abi import (
    _ALL_PIECES,
    _FLOAT_P,
    _U32_P,
    UntangleError,
    UT_ERROR_INVALID_ARGUMENT,
    _UtFrameStats,
    _UtSettings,
    _UtUntangleReport,
)
from .loader import load


def _invalid(message: str) -> UntangleError:
    return UntangleError(UT_ERROR_INVALID_ARGUMENT, message)


def _xyz_array(array, what: str) -> np.ndarray:
    """A float32 (n, 3) view with unit column stride; copies only when the input is of another
    dtype or layout. A flat array of 3n values is taken as n rows."""
    if array is None:
        raise _invalid(f"{what} is None")
    result = np.asarray(array)
    if result.ndim == 1 and result.size % 3 == 0:
        result = result.reshape(-1, 3)
    if result.ndim != 2 or result.shape[1] != 3:
        raise _invalid(f"{what} must have shape (n, 3), got {tuple(np.shape(array))}")
    if result.dtype != np.float32 or result.strides[1] != 4 or result.strides[0] < 12:
        result = np.ascontiguousarray(result, dtype=np.float32)
    if result.strides[0] % 4 != 0 or not result.flags.aligned:
        result = np.ascontiguousarray(result)
    return result


def _float_ptr(array: Optional[np.ndarray]):
    return None if array is None else array.ctypes.data_as(_FLOAT_P)


_U32_MAX = 2**32 - 1


def _u32_array(array, what: str) -> np.ndarray:
    if array is None:
        raise _invalid(f"{what} is None")
    result = np.asarray(array)
    if result.ndim != 1:
        raise _invalid(f"{what} must be one-dimensional, got shape {result.shape}")
    if result.dtype != np.uint32:
        if result.size and (result.dtype.kind not in "iu" or result.min() < 0):
            raise _invalid(f"{what} must hold non-negative integers")
        if result.size and result.max() > _U32_MAX:
            # astype would wrap it round to a small, valid-looking index
            raise _invalid(f"{what} holds {result.max()}, above the largest index {_U32_MAX}")
        result = result.astype(np.uint32)
    return np.ascontiguousarray(result)


def _vec3(values, what: str):
    try:
        x, y, z = (float(v) for v in values)
    except (TypeError, ValueError):
        raise _invalid(f"{what} must be three numbers, got {values!r}") from None
    return (c_float * 3)(x, y, z)


def _piece_arg(piece: Optional[int]) -> int:
    if piece is None:
        return _ALL_PIECES
    if not isinstance(piece, (int, np.integer)) or piece < 0:
        raise _invalid(f"piece must be a non-negative integer or None, got {piece!r}")
    return int(piece)


@dataclass
class Settings:
    untangle: bool
    method: str
    response_strength: float
    thickness: float
    proximity: bool
    iterations: int
    time_step: float
    gravity: tuple
    friction: float
    max_speed: float
    cull: bool
    threads: int
    # Solver details most users never touch; None = the library's default.
    stretch_compliance: Optional[float] = None
    bending_compliance: Optional[float] = None
    spacing: Optional[float] = None

    @classmethod
    def defaults(cls) -> "Settings":
        lib = load()
        c_settings = _UtSettings()
        lib.check(lib.ut_settings_init(byref(c_settings), ctypes.sizeof(_UtSettings)))
        return cls._from_c(c_settings)

    @classmethod
    def of_scene(cls, name: str) -> "Settings":
        lib = load()
        c_settings = _UtSettings()
        c_settings.struct_size = ctypes.sizeof(_UtSettings)
        lib.check(lib.ut_scene_settings(name.encode(), byref(c_settings)))
        return cls._from_c(c_settings)

    @classmethod
    def _from_c(cls, c: _UtSettings) -> "Settings":
        methods = load().methods
        method = methods[c.method] if 0 <= c.method < len(methods) else str(c.method)
        return cls(
            untangle=bool(c.untangle),
            method=method,
            response_strength=c.response_strength,
            thickness=c.thickness,
            proximity=bool(c.proximity),
            iterations=c.iterations,
            time_step=c.time_step,
            gravity=tuple(c.gravity),
            friction=c.friction,
            max_speed=c.max_speed,
            cull=bool(c.cull),
            threads=c.threads,
            stretch_compliance=c.stretch_compliance,
            bending_compliance=c.bending_compliance,
            spacing=c.spacing,
        )

    def _to_c(self) -> _UtSettings:
        lib = load()
        c = _UtSettings()
        lib.check(lib.ut_settings_init(byref(c), ctypes.sizeof(_UtSettings)))
        if self.method not in lib.methods:
            raise _invalid(f"unknown method {self.method!r} (known: {', '.join(lib.methods)})")
        try:
            c.method = lib.methods.index(self.method)
            c.untangle = 1 if self.untangle else 0
            c.proximity = 1 if self.proximity else 0
            c.cull = 1 if self.cull else 0
            c.iterations = int(self.iterations)
            c.threads = int(self.threads)
            c.response_strength = float(self.response_strength)
            c.thickness = float(self.thickness)
            c.time_step = float(self.time_step)
            gx, gy, gz = (float(g) for g in self.gravity)
            c.gravity[0], c.gravity[1], c.gravity[2] = gx, gy, gz
            c.friction = float(self.friction)
            c.max_speed = float(self.max_speed)
            for name in ("stretch_compliance", "bending_compliance", "spacing"):
                value = getattr(self, name)
                if value is not None:
                    setattr(c, name, float(value))
        except (TypeError, ValueError, OverflowError) as error:
            raise _invalid(f"bad settings value: {error}") from None
        return c


def _c_settings(settings: Optional[Settings]):
    return None if settings is None else byref(settings._to_c())


@dataclass
class Piece:
    positions: np.ndarray  # (n, 3) float32
    face_sizes: np.ndarray  # (f,) uint32
    face_indices: np.ndarray  # (sum(face_sizes),) uint32
    inverse_mass: Optional[np.ndarray] = None  # (n,) float32, 0 = pinned


class _Scene:
    """A UtScene handle holding the pieces (the library copies the arrays)."""

    def __init__(self, pieces: Sequence[Piece], spheres=(), ground_height=None, use_positions=True):
        self.lib = load()
        handle = c_void_p()
        self.lib.check(self.lib.ut_scene_create(byref(handle)))
        self.handle = handle
        try:
            if isinstance(pieces, Piece):
                pieces = [pieces]
            self.vertex_counts = []
            self.face_counts = []
            for index, piece in enumerate(pieces):
                self._add_piece(index, piece, use_positions)
            for sphere in spheres:
                try:
                    center, radius = sphere
                    radius = float(radius)
                except (TypeError, ValueError):
                    raise _invalid(f"a sphere must be ((x, y, z), radius), got {sphere!r}") from None
                self.lib.check(
                    self.lib.ut_scene_add_sphere(self.handle, _vec3(center, "sphere center"), radius)
                )
            if ground_height is not None:
                self.lib.check(self.lib.ut_scene_set_ground(self.handle, float(ground_height)))
        except BaseException:
            self.close()
            raise

    def _add_piece(self, index: int, piece: Piece, use_positions: bool) -> None:
        positions = _xyz_array(piece.positions, f"piece {index} positions")
        face_sizes = _u32_array(piece.face_sizes, f"piece {index} face_sizes")
        face_indices = _u32_array(piece.face_indices, f"piece {index} face_indices")
        inverse_mass = None
        if piece.inverse_mass is not None:
            inverse_mass = np.ascontiguousarray(piece.inverse_mass, dtype=np.float32)
            if inverse_mass.shape != (positions.shape[0],):
                raise _invalid(
                    f"piece {index} inverse_mass has shape {inverse_mass.shape}, but the piece "
                    f"has {positions.shape[0]} vertices"
                )
        self.lib.check(
            self.lib.ut_scene_add_piece(
                self.handle,
                positions.ctypes.data_as(_FLOAT_P) if positions.size else None,
                positions.shape[0],
                positions.strides[0],
                face_sizes.ctypes.data_as(_U32_P) if face_sizes.size else None,
                face_sizes.size,
                face_indices.ctypes.data_as(_U32_P) if face_indices.size else None,
                face_indices.size,
                _float_ptr(inverse_mass),
            )
        )
        self.vertex_counts.append(positions.shape[0])
        self.face_counts.append(face_sizes.size)

    @property
    def vertex_count(self) -> int:
        return sum(self.vertex_counts)

    def close(self) -> None:
        if self.handle:
            self.lib.ut_scene_destroy(self.handle)
            self.handle = c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _stats_dict(s: _UtFrameStats) -> dict:
    return {
        "frame": s.frame,
        "triangles": s.triangles,
        "pairs": s.pairs,
        "hits": s.hits,
        "dropped_hits": s.dropped_hits,
        "contours": {
            "loop": s.contours_loop,
            "boundary": s.contours_boundary,
            "crease": s.contours_crease,
        },
        "culled_nodes": s.culled_nodes,
        "candidate_pairs": s.candidate_pairs,
        "proximity_pairs": s.proximity_pairs,
        "stuck_contours": s.stuck_contours,
        "degenerate_triangles": s.degenerate_triangles,
        "duplicate_triangles": s.duplicate_triangles,
        "non_manifold_edges": s.non_manifold_edges,
        "max_edge_strain": s.max_edge_strain,
        "kinetic_energy": s.kinetic_energy,
        "ms": {
            "predict": s.ms_predict,
            "refit": s.ms_refit,
            "broad": s.ms_broad,
            "narrow": s.ms_narrow,
            "contours": s.ms_contours,
            "response": s.ms_response,
            "solve": s.ms_solve,
            "velocities": s.ms_velocities,
            "total": s.ms_total,
            "build": s.ms_build,
        },
    }


def _report_dict(r: _UtUntangleReport) -> dict:
    return {
        "pairs_before": r.pairs_before,
        "pairs_after": r.pairs_after,
        "iterations": r.iterations,
        "contours_left": {
            "loop": r.contours_loop,
            "boundary": r.contours_boundary,
            "crease": r.contours_crease,
        },
        "max_displacement": r.max_displacement,
        "mean_displacement": r.mean_displacement,
        "max_edge_strain": r.max_edge_strain,
        "cancelled": bool(r.cancelled),
        "seconds": r.seconds,
        "iterations_to_clean": r.iterations_to_clean,
        "stage_seconds": {
            "detection": r.seconds_detection,
            "analysis": r.seconds_analysis,
            "response": r.seconds_response,
            "solver": r.seconds_solver,
            "proximity": r.seconds_proximity,
            "strain_limit": r.seconds_strain_limit,
        },
    }
