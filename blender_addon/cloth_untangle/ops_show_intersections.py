"""Show Intersections: selects the intersecting faces of the selected meshes (Edit Mode) and
draws the contours."""

import bpy

from . import meshdata, native, overlay, properties
from .ops_common import ADDON_ERRORS, fail, poll_selection, selected_meshes


class CLOTH_UNTANGLE_OT_show_intersections(bpy.types.Operator):
    """Select the faces of the selected meshes that intersect (Edit Mode) and draw the contours"""
    bl_idname = "cloth_untangle.show_intersections"
    bl_label = "Show Intersections"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return poll_selection(cls, context, modes=('OBJECT', 'EDIT_MESH'))

    def execute(self, context):
        props = context.scene.cloth_untangle
        objects = selected_meshes(context)
        was_editing = context.mode == 'EDIT_MESH'
        if was_editing:
            bpy.ops.object.mode_set(mode='OBJECT')  # edits reach the mesh data only so
        try:
            captures = meshdata.capture_all(objects, context.evaluated_depsgraph_get(),
                                            allow_topology_change=True)
            with native.World([capture.piece() for capture in captures],
                              properties.settings_for(props)) as world:
                world.detect()
                stats = world.stats()
                faces = world.intersecting_faces()
                contours = world.contours()
                boxes = world.culled_boxes() if props.show_bvh else None
        except ADDON_ERRORS as error:
            if was_editing:
                bpy.ops.object.mode_set(mode='EDIT')  # as the user left it
            return fail(self, props, error)
        selected = sum(meshdata.select_faces(obj.data, picked)
                       for obj, picked in zip(objects, faces))
        properties.store_stats(props, stats)
        overlay.set_contours(*contours)
        if boxes is not None:
            overlay.set_boxes(boxes)
        if context.view_layer.objects.active not in objects:
            context.view_layer.objects.active = objects[0]
        bpy.ops.object.mode_set(mode='EDIT')
        context.tool_settings.mesh_select_mode = (False, False, True)
        contour_count = len(contours[2])
        props.status = (f"{stats['pairs']} intersecting pairs: {selected} faces selected, "
                        f"{contour_count} contours")
        self.report({'INFO'}, props.status)
        return {'FINISHED'}
