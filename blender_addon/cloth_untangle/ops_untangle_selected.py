"""Untangle Selected: the selected meshes' current shapes made intersection-free in place (or
as an "Untangled" shape key where modifiers deform them)."""

import bpy

from . import meshdata, native, properties
from .ops_common import ADDON_ERRORS, fail, poll_selection, selected_meshes


class CLOTH_UNTANGLE_OT_untangle_selected(bpy.types.Operator):
    """Remove intersections from the selected meshes, treated as one cloth system"""
    bl_idname = "cloth_untangle.untangle_selected"
    bl_label = "Untangle Selected"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return poll_selection(cls, context)

    def execute(self, context):
        props = context.scene.cloth_untangle
        window_manager = context.window_manager
        try:
            settings = properties.settings_for(props)
            captures = meshdata.capture_all(selected_meshes(context),
                                            context.evaluated_depsgraph_get())
            meshdata.check_writable(captures)
            window_manager.progress_begin(0, props.max_iterations)
            try:
                positions, report = native.untangle(
                    [capture.piece() for capture in captures], settings,
                    max_iterations=props.max_iterations,
                    strain_limit=props.strain_limit,
                    keep_seams_apart=props.keep_seams_apart,
                    progress=lambda iteration, _total, _pairs: (
                        window_manager.progress_update(iteration), True)[1])
            finally:
                window_manager.progress_end()
            meshdata.check_result(captures, positions)
        except ADDON_ERRORS as error:
            return fail(self, props, error)

        before, after = report["pairs_before"], report["pairs_after"]
        properties.store_stats(props, {"pairs": after, "contours": report["contours_left"]},
                               ms=1000.0 * report["seconds"])
        if before == 0:
            props.status = "No intersections found; nothing changed"
            self.report({'INFO'}, props.status)
            return {'FINISHED'}
        targets = {meshdata.write_back(capture, result)
                   for capture, result in zip(captures, positions)}
        where = " (as shape key \"%s\")" % meshdata.SHAPE_KEY_NAME if "shape key" in targets else ""
        if after == 0:
            props.status = f"{before} intersections → 0 in {report['iterations']} iterations{where}"
            self.report({'INFO'}, props.status)
        else:
            left = report["contours_left"]
            props.status = (f"{before} intersections → {after} left after "
                            f"{report['iterations']} iterations ({left['loop']} loop, "
                            f"{left['boundary']} boundary, {left['crease']} crease contours; "
                            f"try more iterations or another method){where}")
            self.report({'WARNING'}, props.status)
        return {'FINISHED'}
