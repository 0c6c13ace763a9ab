"""The add-on's operators, one module per feature: ops_untangle_selected.py, ops_bake_cache.py,
ops_scenes.py (add, run and bake a scene) and ops_show_intersections.py, with what they share in
ops_common.py. This module adds the menu, registers them all and keeps their names importable
as operators.X (the panels, farm.py and the Blender tests use it).

Everything reaches the engine through native.py. Each operator reads Blender data into numpy,
calls the library, and only then writes back, so a failure at any point leaves the meshes as
they were and becomes one report.
"""

import bpy

from .meshdata import AddonError  # noqa: F401 (re-exported)
from .ops_bake_cache import (  # noqa: F401 (re-exported)
    BakeJob,
    CLOTH_UNTANGLE_OT_bake_cache,
    cache_folder,
    cache_paths,
    modifier_path,
)
from .ops_common import _library_state, selected_meshes, show_world_overlay  # noqa: F401
from .ops_scenes import (  # noqa: F401 (re-exported)
    CLOTH_UNTANGLE_OT_add_scene,
    CLOTH_UNTANGLE_OT_bake_scene,
    CLOTH_UNTANGLE_OT_run_scene,
    _live_worlds,
    _running_scenes,
    live_world,
    scene_cloths,
    scene_step,
)
from .ops_show_intersections import CLOTH_UNTANGLE_OT_show_intersections
from .ops_untangle_selected import CLOTH_UNTANGLE_OT_untangle_selected


class VIEW3D_MT_cloth_untangle(bpy.types.Menu):
    bl_label = "Cloth Untangle"
    bl_idname = "VIEW3D_MT_cloth_untangle"

    def draw(self, context):
        layout = self.layout
        layout.operator(CLOTH_UNTANGLE_OT_untangle_selected.bl_idname)
        layout.operator(CLOTH_UNTANGLE_OT_show_intersections.bl_idname)
        layout.operator(CLOTH_UNTANGLE_OT_bake_cache.bl_idname)
        layout.separator()
        layout.operator_menu_enum(CLOTH_UNTANGLE_OT_add_scene.bl_idname, "scene")
        layout.operator(CLOTH_UNTANGLE_OT_run_scene.bl_idname)
        layout.operator(CLOTH_UNTANGLE_OT_bake_scene.bl_idname)


def _menu_entry(self, context):
    # Menu entries make the operators reachable from F3 search, which searches menus.
    self.layout.menu(VIEW3D_MT_cloth_untangle.bl_idname)


classes = (CLOTH_UNTANGLE_OT_untangle_selected, CLOTH_UNTANGLE_OT_bake_cache,
           CLOTH_UNTANGLE_OT_add_scene, CLOTH_UNTANGLE_OT_run_scene,
           CLOTH_UNTANGLE_OT_bake_scene, CLOTH_UNTANGLE_OT_show_intersections,
           VIEW3D_MT_cloth_untangle)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.VIEW3D_MT_object.append(_menu_entry)


def unregister():
    bpy.types.VIEW3D_MT_object.remove(_menu_entry)
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
    for world in _live_worlds.values():
        world.close()
    _live_worlds.clear()
