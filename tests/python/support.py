"""Shared fixtures of the binding tests: the add-on's bindings (native.py and the modules it
re-exports) imported without the package's __init__, which imports bpy; quad grids, and the two
hand-built configurations of tests/capi."""

import importlib
import itertools
import math
import os
import sys
import types

import numpy as np

_ADDON_DIR = os.path.normpath(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "blender_addon", "cloth_untangle")
)
_fresh_packages = itertools.count()


def load_addon_module(name, package="cloth_untangle"):
    """The add-on module `name` (native, loader, ...) as a submodule of `package`: a bare package
    object stands in for the add-on's __init__, so the bindings' relative imports work."""
    if package not in sys.modules:
        stand_in = types.ModuleType(package)
        stand_in.__path__ = [_ADDON_DIR]
        sys.modules[package] = stand_in
    return importlib.import_module(f"{package}.{name}")


def load_fresh_addon_module(name):
    """Like load_addon_module, under a package of its own: nothing cached from other tests."""
    return load_addon_module(name, f"cloth_untangle_fresh_{next(_fresh_packages)}")


def load_native():
    return load_addon_module("native")


native = load_native()


def grid(cells_x, cells_y, mapping):
    """A quad grid; mapping(u, v) with u, v in [0, 1] gives a point. Face r * cells_x + c."""
    u, v = np.meshgrid(np.arange(cells_x + 1) / cells_x, np.arange(cells_y + 1) / cells_y)
    x, y, z = mapping(u.ravel(), v.ravel())
    positions = np.stack([np.broadcast_to(c, u.size) for c in (x, y, z)], axis=1).astype(np.float32)
    j, i = np.meshgrid(np.arange(cells_y), np.arange(cells_x), indexing="ij")
    corner = (j * (cells_x + 1) + i).ravel()
    indices = np.stack([corner, corner + 1, corner + cells_x + 2, corner + cells_x + 1], axis=1)
    sizes = np.full(cells_x * cells_y, 4, dtype=np.uint32)
    return native.Piece(np.ascontiguousarray(positions), sizes, indices.ravel().astype(np.uint32))


def horizontal_sheet():
    """z = 0 over [-1, 1]^2, 10 x 10 cells."""
    return grid(10, 10, lambda u, v: (-1 + 2 * u, -1 + 2 * v, 0.0))


def vertical_sheet():
    """x = 0.05, |y| <= 0.55, z in [-0.97, 1.03]: crosses the horizontal sheet along a line;
    it cuts A's column 5, rows 2..7, and B's row 4 (see tests/capi/fixtures.hpp)."""
    return grid(5, 10, lambda u, v: (0.05, -0.55 + 1.1 * u, -0.97 + 2.0 * v))


def poking_corner(lift=0.0):
    """A flat sheet and a tilted square whose corner pokes 0.12 through it."""
    flat = grid(16, 16, lambda u, v: (-0.8 + 1.6 * u + 0.0037, -0.8 + 1.6 * v + 0.0021, 0.0))
    c, tilt = math.sqrt(0.5), 0.9
    tilted = grid(
        8,
        8,
        lambda u, v: (
            (0.8 * u - 0.8 * v) * c + 0.013,
            (0.8 * u + 0.8 * v) * c * math.cos(tilt) - 0.3,
            (0.8 * u + 0.8 * v) * c * math.sin(tilt) - 0.12 + lift,
        ),
    )
    return [flat, tilted]


def no_gravity():
    settings = native.Settings.defaults()
    settings.gravity = (0.0, 0.0, 0.0)
    return settings
