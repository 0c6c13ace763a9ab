"""Cloth Untangle: repair cloth meshes that cut through themselves (ICM and three other
methods), bake intersection-free caches, and run the reference scenes live.

The engine is libuntangle.so in lib/, loaded lazily with ctypes by native.py; registering the
add-on never touches it, so the add-on installs and shows its UI even without the library.
"""

bl_info = {
    "name": "Cloth Untangle",
    "author": "cloth-untangle contributors",
    "version": (0, 1, 0),
    "blender": (3, 4, 0),
    "location": "View3D > Sidebar > Untangle, Properties > Physics",
    "description": "Remove self-intersections from cloth meshes and caches",
    "category": "Physics",
}

from . import operators, overlay, panels, properties  # noqa: E402 (bl_info comes first)

_modules = (properties, operators, panels, overlay)


def register():
    for module in _modules:
        module.register()


def unregister():
    for module in reversed(_modules):
        module.unregister()
