"""The add-on's UI: one panel, shown as the "Untangle" tab of the 3D View sidebar and under
the Physics properties, with the switches, the operators and the live figures."""

import bpy

from . import operators


def draw_panel(layout, context):
    props = context.scene.cloth_untangle
    layout.use_property_split = True
    layout.use_property_decorate = False

    column = layout.column()
    column.prop(props, "untangle")
    column.prop(props, "method")
    column.prop(props, "response_strength")
    column.prop(props, "thickness")
    column.prop(props, "iterations")
    column.prop(props, "max_iterations")
    column.prop(props, "strain_limit")
    column.prop(props, "keep_seams_apart")
    column = layout.column(heading="Show")
    column.prop(props, "show_contours", text="Contours")
    column.prop(props, "show_bvh", text="Culled BVH")

    box = layout.box()
    box.label(text="Selected Meshes", icon='MESH_DATA')
    column = box.column(align=True)
    column.operator(operators.CLOTH_UNTANGLE_OT_untangle_selected.bl_idname, icon='MOD_CLOTH')
    column.operator(operators.CLOTH_UNTANGLE_OT_show_intersections.bl_idname,
                    icon='SELECT_INTERSECT')
    column.operator(operators.CLOTH_UNTANGLE_OT_bake_cache.bl_idname, icon='FILE_CACHE')
    box.prop(props, "cache_directory", text="Folder")
    box.prop(props, "independent_frames")

    box = layout.box()
    box.label(text="Scenes", icon='SCENE_DATA')
    box.operator_menu_enum(operators.CLOTH_UNTANGLE_OT_add_scene.bl_idname, "scene",
                           icon='ADD')
    row = box.row(align=True)
    row.operator(operators.CLOTH_UNTANGLE_OT_run_scene.bl_idname, icon='PLAY')
    row.operator(operators.CLOTH_UNTANGLE_OT_bake_scene.bl_idname, icon='REC')
    box.prop(props, "scene_frames")

    box = layout.box()
    box.label(text="Stats", icon='INFO')
    grid = box.grid_flow(row_major=True, columns=2, even_columns=True, align=True)
    for label, value in (
            ("Intersections", props.stat_pairs),
            ("Contours: loop", props.stat_contours_loop),
            ("boundary", props.stat_contours_boundary),
            ("crease", props.stat_contours_crease),
            ("Culled nodes", props.stat_culled_nodes),
            ("ms per frame", f"{props.stat_ms:.2f}")):
        grid.label(text=label)
        grid.label(text=str(value))
    if props.status:
        box.label(text=props.status)
    loaded, text = operators._library_state()
    box.label(text=text, icon='CHECKMARK' if loaded else 'ERROR')


class VIEW3D_PT_cloth_untangle(bpy.types.Panel):
    bl_label = "Cloth Untangle"
    bl_idname = "VIEW3D_PT_cloth_untangle"
    bl_space_type = 'VIEW_3D'
    bl_region_type = 'UI'
    bl_category = "Untangle"

    def draw(self, context):
        draw_panel(self.layout, context)


class PHYSICS_PT_cloth_untangle(bpy.types.Panel):
    bl_label = "Cloth Untangle"
    bl_idname = "PHYSICS_PT_cloth_untangle"
    bl_space_type = 'PROPERTIES'
    bl_region_type = 'WINDOW'
    bl_context = "physics"
    bl_options = {'DEFAULT_CLOSED'}

    @classmethod
    def poll(cls, context):
        return context.object is not None and context.object.type == 'MESH'

    def draw(self, context):
        draw_panel(self.layout, context)
        stored = context.object.cloth_untangle
        if stored.role != 'NONE':
            box = self.layout.box()
            box.label(text=f"Scene object: {stored.scene_name} ({stored.role.lower()})")
            if stored.role == 'CLOTH':
                box.prop(stored, "thickness")
                box.prop(stored, "iterations")
                box.prop(stored, "time_step")


classes = (VIEW3D_PT_cloth_untangle, PHYSICS_PT_cloth_untangle)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)


def unregister():
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
