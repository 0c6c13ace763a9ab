"""ctypes bindings of libuntangle (capi/include/untangle.h): the Python API, and the one module
the add-on, its tests and the benchmarks import (`from . import native`; `native.World`, ...).

The bindings are split by concept: abi.py (status codes, errors, struct mirrors, signatures),
loader.py (finding and loading the library), convert.py (arrays, Settings, Piece, scenes),
world.py (World); this module adds the untangler, detect-only and thread calls and re-exports
the names of the others. Every failing status becomes an UntangleError carrying the library's
message. No bpy import: plain Python tests this package (tests/python/support.py).
"""

from __future__ import annotations

import ctypes
from ctypes import byref, c_int32, c_size_t, c_uint8
from typing import Callable, Optional, Sequence

import numpy as np

from .abi import (  # noqa: F401 (re-exported)
    ABI_MAJOR,
    CONTOUR_TYPES,
    STATUS_NAMES,
    UT_ERROR_CANCELLED,
    UT_ERROR_INTERNAL,
    UT_ERROR_INVALID_ARGUMENT,
    UT_ERROR_INVALID_MESH,
    UT_ERROR_INVALID_OPERATION,
    UT_ERROR_OUT_OF_MEMORY,
    UT_OK,
    _FLOAT_P,
    _P,
    LibraryNotFound,
    UntangleError,
    _ProgressFn,
    _UtFrameStats,
    _UtSettings,
    _UtUntangleOptions,
    _UtUntangleReport,
)
from .convert import (  # noqa: F401 (re-exported)
    Piece,
    Settings,
    _c_settings,
    _float_ptr,
    _invalid,
    _report_dict,
    _Scene,
    _stats_dict,
    _xyz_array,
)
from .loader import Library, abi_version, library_file_name, library_path_candidates, load  # noqa: F401
from .world import World  # noqa: F401 (re-exported)


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
    max_iterations: Optional[int],
    independent: bool = False,
    pull_stiffness: Optional[float] = None,
    strain_limit: Optional[float] = None,
    keep_seams_apart: bool = False,
):
    lib = load()
    options = _UtUntangleOptions()
    lib.check(lib.ut_untangle_options_init(byref(options), ctypes.sizeof(_UtUntangleOptions)))
    if max_iterations is not None:  # None: the library's default
        valid = isinstance(max_iterations, (int, np.integer))
        if not valid or not -(2**31) <= max_iterations < 2**31:
            raise _invalid(f"max_iterations must be an integer, got {max_iterations!r}")
        options.max_iterations = int(max_iterations)
    options.independent = 1 if independent else 0
    if pull_stiffness is not None:
        options.pull_stiffness = float(pull_stiffness)
    if strain_limit is not None:
        options.strain_limit = float(strain_limit)
    options.keep_seams_apart = 1 if keep_seams_apart else 0
    return options


def _split(array: np.ndarray, counts: Sequence[int]) -> list:
    bounds = np.cumsum([0] + list(counts))
    return [array[bounds[i] : bounds[i + 1]] for i in range(len(counts))]


def untangle(
    pieces: Sequence[Piece],
    settings: Optional[Settings] = None,
    max_iterations: Optional[int] = None,
    rest: Optional[Sequence[np.ndarray]] = None,
    progress: Optional[Callable] = None,
    pull_stiffness: Optional[float] = None,
    strain_limit: Optional[float] = None,
    keep_seams_apart: bool = False,
) -> tuple:
    """Untangles one state of the pieces. Returns (new positions per piece, report dict); the
    inputs are not modified. progress(iteration, max_iterations, pairs) returning False cancels:
    the call then returns normally with report["cancelled"] True and the state reached.
    strain_limit: the most any edge may stretch or shrink against the input while untangling
    (None: the library's default, 0.045; 0: no limit). Seams (vertices at one position along border
    edges that run together) are sewn unless keep_seams_apart."""
    lib = load()
    options = _options(max_iterations, pull_stiffness=pull_stiffness, strain_limit=strain_limit,
                       keep_seams_apart=keep_seams_apart)
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
    max_iterations: Optional[int] = None,
    progress: Optional[Callable] = None,
    pull_stiffness: Optional[float] = None,
    strain_limit: Optional[float] = None,
    keep_seams_apart: bool = False,
) -> tuple:
    """Untangles every frame of (F, n_total, 3) positions over all pieces in order (the pieces
    give the topology; their positions are ignored). Returns ((F_done, n_total, 3) float32, one
    report dict per finished frame). progress(frame, frames, pairs) returning False cancels."""
    lib = load()
    options = _options(max_iterations, independent, pull_stiffness, strain_limit, keep_seams_apart)
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


def __getattr__(name: str):
    # METHODS and SCENES are the library's own lists (ut_method_name, ut_scene_name), read on
    # first use: importing this module loads nothing.
    if name == "METHODS":
        return load().methods
    if name == "SCENES":
        return load().scenes
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
