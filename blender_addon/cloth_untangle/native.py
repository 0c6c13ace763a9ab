"""ctypes bindings of libuntangle (capi/include/untangle.h).

Finds and loads the library lazily (environment variable CLOTH_UNTANGLE_LIB first, then the
add-on's lib/ folder: libuntangle.so on Linux, libuntangle.dll with its MinGW runtime DLLs on
Windows, libuntangle.dylib on macOS), declares every function's argtypes/restype once, refuses a library of
another ABI major version, and turns every failing status into an UntangleError carrying the
library's message. Arrays go in and out as numpy arrays without copies beyond what the ABI
needs (float32 xyz, uint32 indices). No bpy import: plain Python tests this module.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    byref,
    c_char_p,
    c_double,
    c_float,
    c_int32,
    c_size_t,
    c_uint8,
    c_uint32,
    c_uint64,
    c_void_p,
)
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

import numpy as np

ABI_MAJOR = 1  # the major version this module speaks; another major is refused

UT_OK = 0
UT_ERROR_INVALID_ARGUMENT = 1
UT_ERROR_INVALID_MESH = 2
UT_ERROR_INVALID_OPERATION = 3
UT_ERROR_OUT_OF_MEMORY = 4
UT_ERROR_CANCELLED = 5
UT_ERROR_INTERNAL = 6

STATUS_NAMES = {
    UT_OK: "UT_OK",
    UT_ERROR_INVALID_ARGUMENT: "UT_ERROR_INVALID_ARGUMENT",
    UT_ERROR_INVALID_MESH: "UT_ERROR_INVALID_MESH",
    UT_ERROR_INVALID_OPERATION: "UT_ERROR_INVALID_OPERATION",
    UT_ERROR_OUT_OF_MEMORY: "UT_ERROR_OUT_OF_MEMORY",
    UT_ERROR_CANCELLED: "UT_ERROR_CANCELLED",
    UT_ERROR_INTERNAL: "UT_ERROR_INTERNAL",
}

METHODS = ("icm", "kikuchi", "ye", "buffet")
SCENES = ("tangled-start", "dropped-cloth", "two-sheets")
CONTOUR_TYPES = ("loop", "boundary", "crease")

_ALL_PIECES = -1
_NO_PARTICLE = 0xFFFFFFFF
_ENV_VARIABLE = "CLOTH_UNTANGLE_LIB"


class UntangleError(Exception):
    """Every failure of the library (and of bad input caught before reaching it)."""

    def __init__(self, status: int, message: str):
        super().__init__(f"{message} [{STATUS_NAMES.get(status, status)}]")
        self.status = status
        self.message = message


class LibraryNotFound(UntangleError):
    """The library could not be loaded; the message lists every path tried and why."""

    def __init__(self, message: str):
        super().__init__(UT_ERROR_INVALID_OPERATION, message)


# --------------------------------------------------------------------------------------------
# C structs (mirrors of untangle.h; the first field is always the struct's size)
# --------------------------------------------------------------------------------------------


class _UtSettings(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("method", c_int32),
        ("untangle", c_int32),
        ("proximity", c_int32),
        ("cull", c_int32),
        ("iterations", c_int32),
        ("threads", c_int32),
        ("reserved", c_int32),
        ("response_strength", c_double),
        ("thickness", c_double),
        ("time_step", c_double),
        ("gravity", c_double * 3),
        ("friction", c_double),
        ("max_speed", c_double),
        ("stretch_compliance", c_double),
        ("bending_compliance", c_double),
        ("spacing", c_double),
    ]


class _UtFrameStats(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("reserved", c_uint32),
        ("frame", c_uint64),
        ("triangles", c_uint64),
        ("pairs", c_uint64),
        ("hits", c_uint64),
        ("dropped_hits", c_uint64),
        ("contours_loop", c_uint64),
        ("contours_boundary", c_uint64),
        ("contours_crease", c_uint64),
        ("culled_nodes", c_uint64),
        ("candidate_pairs", c_uint64),
        ("proximity_pairs", c_uint64),
        ("stuck_contours", c_uint64),
        ("degenerate_triangles", c_uint64),
        ("duplicate_triangles", c_uint64),
        ("non_manifold_edges", c_uint64),
        ("max_edge_strain", c_double),
        ("kinetic_energy", c_double),
        ("ms_predict", c_double),
        ("ms_refit", c_double),
        ("ms_broad", c_double),
        ("ms_narrow", c_double),
        ("ms_contours", c_double),
        ("ms_response", c_double),
        ("ms_solve", c_double),
        ("ms_velocities", c_double),
        ("ms_total", c_double),
        ("ms_build", c_double),
    ]


class _UtUntangleOptions(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("max_iterations", c_int32),
        ("pull_stiffness", c_double),
        ("independent", c_int32),
        ("reserved", c_int32),
        ("strain_limit", c_double),
    ]


class _UtUntangleReport(Structure):
    _fields_ = [
        ("struct_size", c_uint32),
        ("iterations", c_int32),
        ("pairs_before", c_uint64),
        ("pairs_after", c_uint64),
        ("contours_loop", c_uint64),
        ("contours_boundary", c_uint64),
        ("contours_crease", c_uint64),
        ("cancelled", c_int32),
        ("reserved", c_int32),
        ("max_displacement", c_double),
        ("mean_displacement", c_double),
        ("max_edge_strain", c_double),
        ("seconds", c_double),
    ]


_ProgressFn = CFUNCTYPE(c_int32, c_void_p, c_int32, c_int32, c_uint64)

_P = POINTER
_FLOAT_P = _P(c_float)
_U32_P = _P(c_uint32)
_SIZE_P = _P(c_size_t)

# name: (restype, argtypes). Every function but the four below returns a UtStatus (int32).
_SIGNATURES = {
    "ut_abi_version": (c_uint32, []),
    "ut_last_error": (c_char_p, []),
    "ut_status_name": (c_char_p, [c_int32]),
    "ut_settings_init": (c_int32, [_P(_UtSettings), c_size_t]),
    "ut_scene_settings": (c_int32, [c_char_p, _P(_UtSettings)]),
    "ut_set_threads": (c_int32, [c_int32]),
    "ut_get_threads": (c_int32, [_P(c_int32)]),
    "ut_scene_create": (c_int32, [_P(c_void_p)]),
    "ut_scene_destroy": (None, [c_void_p]),
    "ut_scene_add_piece": (
        c_int32,
        [c_void_p, _FLOAT_P, c_size_t, c_size_t, _U32_P, c_size_t, _U32_P, c_size_t, _FLOAT_P],
    ),
    "ut_scene_add_sphere": (c_int32, [c_void_p, _FLOAT_P, c_float]),
    "ut_scene_set_ground": (c_int32, [c_void_p, c_float]),
    "ut_scene_piece_count": (c_int32, [c_void_p, _SIZE_P]),
    "ut_scene_vertex_count": (c_int32, [c_void_p, c_int32, _SIZE_P]),
    "ut_scene_validate": (c_int32, [c_void_p]),
    "ut_world_create": (c_int32, [c_void_p, _P(_UtSettings), _P(c_void_p)]),
    "ut_world_create_scene": (c_int32, [c_char_p, _P(_UtSettings), _P(c_void_p)]),
    "ut_world_destroy": (None, [c_void_p]),
    "ut_world_piece_count": (c_int32, [c_void_p, _SIZE_P]),
    "ut_world_vertex_count": (c_int32, [c_void_p, c_int32, _SIZE_P]),
    "ut_world_piece_faces": (
        c_int32,
        [c_void_p, c_int32, _U32_P, c_size_t, _SIZE_P, _U32_P, c_size_t, _SIZE_P],
    ),
    "ut_world_colliders": (
        c_int32,
        [c_void_p, _FLOAT_P, c_size_t, _SIZE_P, _P(c_int32), _FLOAT_P],
    ),
    "ut_world_get_settings": (c_int32, [c_void_p, _P(_UtSettings)]),
    "ut_world_set_settings": (c_int32, [c_void_p, _P(_UtSettings)]),
    "ut_world_step": (c_int32, [c_void_p, c_uint32]),
    "ut_world_detect": (c_int32, [c_void_p]),
    "ut_world_get_positions": (c_int32, [c_void_p, c_int32, _FLOAT_P, c_size_t, c_size_t]),
    "ut_world_set_positions": (c_int32, [c_void_p, c_int32, _FLOAT_P, c_size_t, c_size_t]),
    "ut_world_get_velocities": (c_int32, [c_void_p, c_int32, _FLOAT_P, c_size_t, c_size_t]),
    "ut_world_set_velocities": (c_int32, [c_void_p, c_int32, _FLOAT_P, c_size_t, c_size_t]),
    "ut_world_stats": (c_int32, [c_void_p, _P(_UtFrameStats)]),
    "ut_world_contours": (
        c_int32,
        [c_void_p, _FLOAT_P, c_size_t, _SIZE_P, _U32_P, _P(c_uint8), c_size_t, _SIZE_P],
    ),
    "ut_world_culled_boxes": (c_int32, [c_void_p, _FLOAT_P, c_size_t, _SIZE_P]),
    "ut_world_intersecting_faces": (c_int32, [c_void_p, c_int32, _U32_P, c_size_t, _SIZE_P]),
    "ut_world_grab_begin": (c_int32, [c_void_p, _FLOAT_P, _FLOAT_P, c_float, _U32_P]),
    "ut_world_grab_move": (c_int32, [c_void_p, _FLOAT_P, _FLOAT_P]),
    "ut_world_grab_end": (c_int32, [c_void_p]),
    "ut_detect": (
        c_int32,
        [c_void_p, _P(_UtSettings), _P(_UtFrameStats), _P(c_uint8), c_size_t],
    ),
    "ut_untangle_options_init": (c_int32, [_P(_UtUntangleOptions), c_size_t]),
    "ut_untangle": (
        c_int32,
        [
            c_void_p,
            _P(_UtSettings),
            _P(_UtUntangleOptions),
            _FLOAT_P,
            _FLOAT_P,
            c_size_t,
            _P(_UtUntangleReport),
            _ProgressFn,
            c_void_p,
        ],
    ),
    "ut_untangle_sequence": (
        c_int32,
        [
            c_void_p,
            _P(_UtSettings),
            _P(_UtUntangleOptions),
            _FLOAT_P,
            c_size_t,
            c_size_t,
            _FLOAT_P,
            _P(_UtUntangleReport),
            _SIZE_P,
            _ProgressFn,
            c_void_p,
        ],
    ),
}


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


class Library:
    """The loaded library with every signature declared; `lib.ut_x(...)` calls the C function
    and `lib.check(status)` raises UntangleError for a failing status."""

    def __init__(self, cdll: ctypes.CDLL, path: str):
        self.cdll = cdll
        self.path = path
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(cdll, name)  # AttributeError: caught by load()
            function.restype = restype
            function.argtypes = argtypes
            setattr(self, name, function)
        packed = self.ut_abi_version()
        self.version = (packed >> 16, (packed >> 8) & 0xFF, packed & 0xFF)

    def last_error(self) -> str:
        message = self.ut_last_error()
        return message.decode("utf-8", "replace") if message else ""

    def check(self, status: int) -> None:
        if status != UT_OK:
            raise UntangleError(status, self.last_error() or STATUS_NAMES.get(status, "error"))


_library: Optional[Library] = None
_library_lock = threading.Lock()


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def library_file_name(platform: Optional[str] = None) -> str:
    """The library's file name in lib/ on a platform (a sys.platform value; default: this one)."""
    platform = sys.platform if platform is None else platform
    if platform in ("win32", "cygwin"):
        return "libuntangle.dll"  # MinGW-w64 keeps the lib prefix
    if platform == "darwin":
        return "libuntangle.dylib"
    return "libuntangle.so"


def library_path_candidates(platform: Optional[str] = None) -> list:
    """Where load() looks, in order: $CLOTH_UNTANGLE_LIB, then the package's lib/ folder (the
    zip carries the libraries of several platforms there; only this platform's is tried)."""
    candidates = []
    from_environment = os.environ.get(_ENV_VARIABLE)
    if from_environment:
        candidates.append(from_environment)
    candidates.append(os.path.join(_package_dir(), "lib", library_file_name(platform)))
    return candidates


# os.add_dll_directory handles of the loaded library's folder; closing one would stop Windows
# from finding the runtime DLLs that the library loads later.
_dll_directories = []


def _load_cdll(path: str, platform: Optional[str] = None) -> ctypes.CDLL:
    platform = sys.platform if platform is None else platform
    if platform != "win32":
        return ctypes.CDLL(path)
    # Python 3.8+ on Windows resolves a DLL's own imports (libgomp-1.dll, libwinpthread-1.dll,
    # libgcc_s_seh-1.dll, shipped beside libuntangle.dll) only from the system folders, the
    # folder of a DLL given by full path and folders added with os.add_dll_directory: PATH and
    # the working directory do not count. The folder is added too, so that a path given through
    # the environment variable works the same way.
    path = os.path.abspath(path)
    directory = os.add_dll_directory(os.path.dirname(path))
    try:
        cdll = ctypes.CDLL(path)
    except OSError:
        directory.close()
        raise
    _dll_directories.append(directory)
    return cdll


def _open(path: str, platform: Optional[str] = None) -> Library:
    # libgomp reads OMP_WAIT_POLICY once, when it is loaded with the library. Its default lets
    # idle threads spin at every barrier; in Blender (and next to other processes on few cores)
    # a spinning thread takes the core the working one needs: two threads ran 10x slower than
    # one under load. A policy the user set is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cdll = _load_cdll(path, platform)
    try:
        library = Library(cdll, path)
    except AttributeError as error:
        raise OSError(f"not a compatible libuntangle ({error})") from None
    if library.version[0] != ABI_MAJOR:
        raise UntangleError(
            UT_ERROR_INVALID_OPERATION,
            f"{path} has ABI version {'.'.join(map(str, library.version))}, but this add-on "
            f"needs major version {ABI_MAJOR}",
        )
    return library


def load(path: Optional[str] = None) -> Library:
    """The library, loaded on first use and cached. With a path, only that path is tried (and
    the result is not cached). Raises LibraryNotFound listing every path tried, or
    UntangleError for a library of another ABI major version."""
    global _library
    if path is None and _library is not None:
        return _library
    with _library_lock:
        if path is None and _library is not None:
            return _library
        tried = []
        for candidate in [path] if path is not None else library_path_candidates():
            if not os.path.exists(candidate):
                tried.append(f"{candidate}: no such file")
                continue
            try:
                library = _open(candidate)
            except OSError as error:
                tried.append(f"{candidate}: {error}")
                continue
            if path is None:
                _library = library
            return library
        raise LibraryNotFound(
            "cannot load libuntangle; tried:\n  "
            + "\n  ".join(tried)
            + f"\n(set {_ENV_VARIABLE} to the library's path, or put it in the add-on's lib/ folder)"
        )


def abi_version() -> tuple:
    return load().version


# --------------------------------------------------------------------------------------------
# Array helpers
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Settings and pieces
# --------------------------------------------------------------------------------------------


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
        method = METHODS[c.method] if 0 <= c.method < len(METHODS) else str(c.method)
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
        if self.method not in METHODS:
            raise _invalid(f"unknown method {self.method!r} (known: {', '.join(METHODS)})")
        try:
            c.method = METHODS.index(self.method)
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
    }


# --------------------------------------------------------------------------------------------
# World
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Progress callbacks
# --------------------------------------------------------------------------------------------


class _ProgressBridge:
    """Wraps a Python callable as a C callback. An exception inside it cancels the call and is
    re-raised once the call has returned. The CFUNCTYPE object lives as long as this bridge,
    which the caller keeps for the duration of the C call."""

    def __init__(self, progress: Optional[Callable]):
        self.progress = progress
        self.error: Optional[BaseException] = None
        self.c_function = _ProgressFn(self._call) if progress is not None else _ProgressFn()

    def _call(self, _user_data, done, total, pairs):
        try:
            return 0 if self.progress(int(done), int(total), int(pairs)) is False else 1
        except BaseException as error:  # noqa: B036 (KeyboardInterrupt cancels too)
            self.error = error
            return 0

    def reraise(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error


def _options(
    max_iterations: int,
    independent: bool = False,
    pull_stiffness: Optional[float] = None,
    strain_limit: Optional[float] = None,
):
    lib = load()
    options = _UtUntangleOptions()
    lib.check(lib.ut_untangle_options_init(byref(options), ctypes.sizeof(_UtUntangleOptions)))
    if not isinstance(max_iterations, (int, np.integer)) or not -(2**31) <= max_iterations < 2**31:
        raise _invalid(f"max_iterations must be an integer, got {max_iterations!r}")
    options.max_iterations = int(max_iterations)
    options.independent = 1 if independent else 0
    if pull_stiffness is not None:
        options.pull_stiffness = float(pull_stiffness)
    if strain_limit is not None:
        options.strain_limit = float(strain_limit)
    return options


def _split(array: np.ndarray, counts: Sequence[int]) -> list:
    bounds = np.cumsum([0] + list(counts))
    return [array[bounds[i] : bounds[i + 1]] for i in range(len(counts))]


# --------------------------------------------------------------------------------------------
# Untangler and detect-only
# --------------------------------------------------------------------------------------------


def untangle(
    pieces: Sequence[Piece],
    settings: Optional[Settings] = None,
    max_iterations: int = 300,
    rest: Optional[Sequence[np.ndarray]] = None,
    progress: Optional[Callable] = None,
    pull_stiffness: Optional[float] = None,
    strain_limit: Optional[float] = None,
) -> tuple:
    """Untangles one state of the pieces. Returns (new positions per piece, report dict); the
    inputs are not modified. progress(iteration, max_iterations, pairs) returning False cancels:
    the call then returns normally with report["cancelled"] True and the state reached.
    strain_limit: the most any edge may stretch or shrink against the input while untangling
    (None: the library's default, 0.045; 0: no limit)."""
    lib = load()
    options = _options(max_iterations, pull_stiffness=pull_stiffness, strain_limit=strain_limit)
    c_settings = _c_settings(settings)
    with _Scene(pieces) as scene:
        n = scene.vertex_count
        rest_array = None
        if rest is not None:
            parts = [_xyz_array(part, f"rest[{i}]") for i, part in enumerate(rest)]
            rest_array = np.ascontiguousarray(np.concatenate(parts) if parts else np.empty((0, 3), np.float32))
            if rest_array.shape[0] != n:
                raise _invalid(f"rest has {rest_array.shape[0]} vertices, but the pieces have {n}")
        output = np.empty((n, 3), dtype=np.float32)
        report = _UtUntangleReport()
        report.struct_size = ctypes.sizeof(_UtUntangleReport)
        bridge = _ProgressBridge(progress)
        status = lib.ut_untangle(
            scene.handle,
            c_settings,
            byref(options),
            _float_ptr(rest_array),
            output.ctypes.data_as(_FLOAT_P),
            n,
            byref(report),
            bridge.c_function,
            None,
        )
        bridge.reraise()
        if status != UT_ERROR_CANCELLED:
            lib.check(status)
        return _split(output, scene.vertex_counts), _report_dict(report)


def untangle_sequence(
    pieces: Sequence[Piece],
    frames: np.ndarray,
    settings: Optional[Settings] = None,
    independent: bool = False,
    max_iterations: int = 300,
    progress: Optional[Callable] = None,
    pull_stiffness: Optional[float] = None,
    strain_limit: Optional[float] = None,
) -> tuple:
    """Untangles every frame of (F, n_total, 3) positions over all pieces in order (the pieces
    give the topology; their positions are ignored). Returns ((F_done, n_total, 3) float32, one
    report dict per finished frame). progress(frame, frames, pairs) returning False cancels."""
    lib = load()
    options = _options(max_iterations, independent, pull_stiffness, strain_limit)
    c_settings = _c_settings(settings)
    frames_array = np.asarray(frames)
    if frames_array.ndim == 2 and frames_array.shape[1] % 3 == 0:
        frames_array = frames_array.reshape(frames_array.shape[0], -1, 3)
    if frames_array.ndim != 3 or frames_array.shape[2] != 3:
        raise _invalid(f"frames must have shape (F, n, 3), got {np.shape(frames)}")
    frames_array = np.ascontiguousarray(frames_array, dtype=np.float32)
    frame_count, n = frames_array.shape[0], frames_array.shape[1]
    with _Scene(pieces) as scene:
        output = np.empty_like(frames_array)
        reports = (_UtUntangleReport * max(frame_count, 1))()
        reports[0].struct_size = ctypes.sizeof(_UtUntangleReport)
        done = c_size_t(0)
        bridge = _ProgressBridge(progress)
        status = lib.ut_untangle_sequence(
            scene.handle,
            c_settings,
            byref(options),
            frames_array.ctypes.data_as(_FLOAT_P) if frames_array.size else None,
            frame_count,
            n,
            output.ctypes.data_as(_FLOAT_P) if output.size else None,
            reports,
            byref(done),
            bridge.c_function,
            None,
        )
        bridge.reraise()
        if status != UT_ERROR_CANCELLED:
            lib.check(status)
        finished = done.value
        return output[:finished], [_report_dict(reports[i]) for i in range(finished)]


def detect(pieces: Sequence[Piece], cull: bool = True, threads: int = 0) -> dict:
    """Detects the intersections of the pieces once. Returns the stats dict (pairs, hits,
    dropped_hits, contours, culled_nodes, ms, ...) plus "intersecting_faces": per piece the
    sorted input polygon indices that intersect (uint32)."""
    lib = load()
    c_settings = _UtSettings()
    lib.check(lib.ut_settings_init(byref(c_settings), ctypes.sizeof(_UtSettings)))
    c_settings.cull = 1 if cull else 0
    c_settings.threads = int(threads)
    with _Scene(pieces) as scene:
        total_faces = sum(scene.face_counts)
        flags = np.zeros(total_faces, dtype=np.uint8)
        stats = _UtFrameStats()
        stats.struct_size = ctypes.sizeof(_UtFrameStats)
        lib.check(
            lib.ut_detect(
                scene.handle,
                byref(c_settings),
                byref(stats),
                flags.ctypes.data_as(_P(c_uint8)) if total_faces else None,
                total_faces,
            )
        )
        result = _stats_dict(stats)
        result["intersecting_faces"] = [
            np.flatnonzero(part).astype(np.uint32) for part in _split(flags, scene.face_counts)
        ]
        return result


def set_threads(threads: int) -> None:
    """Default OpenMP thread count for work started from this thread (0 = OpenMP's default)."""
    lib = load()
    lib.check(lib.ut_set_threads(int(threads)))


def get_threads() -> int:
    lib = load()
    value = c_int32()
    lib.check(lib.ut_get_threads(byref(value)))
    return value.value


__all__ = [
    "UntangleError",
    "LibraryNotFound",
    "library_file_name",
    "library_path_candidates",
    "load",
    "abi_version",
    "METHODS",
    "SCENES",
    "Settings",
    "Piece",
    "World",
    "untangle",
    "untangle_sequence",
    "detect",
    "set_threads",
    "get_threads",
]
