"""What every operator of the add-on shares: the errors it turns into reports, the selection
polls, the library state the panel shows and handing a world's drawing to the overlay."""

from . import native, overlay, pc2
from .meshdata import AddonError


ADDON_ERRORS = (native.UntangleError, AddonError, pc2.Pc2Error, OSError)


def refuse(cls, message):
    # poll_message_set exists from Blender 3.0 on; older versions just grey the button out.
    if hasattr(cls, "poll_message_set"):
        cls.poll_message_set(message)
    return False


def selected_meshes(context):
    return sorted((obj for obj in context.selected_objects if obj.type == 'MESH'),
                  key=lambda obj: obj.name)


def poll_selection(cls, context, modes=('OBJECT',)):
    if context.mode not in modes:
        return refuse(cls, "Switch to Object Mode first")
    if not selected_meshes(context):
        return refuse(cls, "Select one or more mesh objects")
    return True


def fail(operator, props, error):
    message = str(getattr(error, "message", None) or error)
    props.status = message
    operator.report({'ERROR'}, message)
    return {'CANCELLED'}


def _library_state():
    """(loaded, text) for the panel; the library is loaded lazily, once."""
    try:
        native.load()
        return True, "Library %d.%d.%d" % tuple(native.abi_version())
    except native.UntangleError as error:
        return False, error.message.splitlines()[0] if error.message else str(error)


def show_world_overlay(props, world):
    """Hands the world's contours and culled boxes to the overlay (when they are shown)."""
    if props.show_contours:
        overlay.set_contours(*world.contours())
    if props.show_bvh:
        overlay.set_boxes(world.culled_boxes())
