"""The C ABI as Python sees it (capi/include/untangle.h): the ABI major version spoken here,
status codes and the UntangleError they become, ctypes mirrors of the C structs (the first
field is always the struct's size) and every function's restype/argtypes. No bpy import."""

from __future__ import annotations

from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_float,
    c_int32,
    c_size_t,
    c_uint32,
    c_uint64,
    c_uint8,
    c_void_p,
)


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
        ("keep_seams_apart", c_int32),
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
        ("iterations_to_clean", c_int32),  # ABI 1.2
        ("reserved2", c_int32),
        ("seconds_detection", c_double),
        ("seconds_analysis", c_double),
        ("seconds_response", c_double),
        ("seconds_solver", c_double),
        ("seconds_proximity", c_double),
        ("seconds_strain_limit", c_double),  # ABI 1.3
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
    "ut_method_name": (c_int32, [c_int32, _P(c_char_p)]),
    "ut_scene_name": (c_int32, [c_int32, _P(c_char_p)]),
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
