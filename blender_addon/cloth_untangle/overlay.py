"""Viewport overlay: intersection contours as green lines, culled BVH nodes as cyan boxes.

The operators hand over plain numpy arrays (world space); the GPU batches are built lazily
in the draw callback, because in the background (and before the first redraw) there is no
GPU context. One POST_VIEW handler for the 3D View, removed on unregister.
"""

import bpy
import numpy as np

CONTOUR_COLOR = (0.1, 1.0, 0.2, 1.0)
BOX_COLOR = (0.0, 0.9, 1.0, 0.8)

# The 12 edges of a box whose 8 corners are numbered by bits (x, y, z) = (1, 2, 4).
_BOX_EDGES = np.array([(0, 1), (2, 3), (4, 5), (6, 7), (0, 2), (1, 3), (4, 6), (5, 7),
                       (0, 4), (1, 5), (2, 6), (3, 7)], dtype=np.uint32)
_CORNER_BITS = np.array([[(c >> axis) & 1 for axis in range(3)] for c in range(8)], dtype=bool)

_state = {"contours": None, "boxes": None, "batches": None, "handler": None, "shader": None}


def contour_lines(points, offsets, types):
    """LINES index pairs for contour polylines; loops (type 0) also close their last segment."""
    points = np.asarray(points, dtype=np.float32).reshape(-1, 3)
    offsets = np.asarray(offsets, dtype=np.int64)
    types = np.asarray(types)
    if len(offsets) < 2 or len(points) < 2:
        return points, np.zeros((0, 2), dtype=np.uint32)
    starts, ends = offsets[:-1], offsets[1:]
    segment = np.arange(len(points) - 1)
    # A segment j -> j+1 is inside a contour unless j+1 starts the next contour.
    is_start = np.zeros(len(points) + 1, dtype=bool)
    is_start[starts] = True
    inner = segment[~is_start[segment + 1]]
    closing = (types == 0) & (ends - starts >= 3)
    pairs = np.concatenate([np.stack([inner, inner + 1], axis=1),
                            np.stack([ends[closing] - 1, starts[closing]], axis=1)])
    return points, pairs.astype(np.uint32)


def box_lines(boxes):
    """Corner positions (8 per box) and LINES index pairs (12 per box) for (k, 2, 3) boxes."""
    boxes = np.asarray(boxes, dtype=np.float32).reshape(-1, 2, 3)
    corners = np.where(_CORNER_BITS[None, :, :], boxes[:, 1:2, :], boxes[:, 0:1, :])
    base = (np.arange(len(boxes), dtype=np.uint32) * 8)[:, None, None]
    return corners.reshape(-1, 3), (base + _BOX_EDGES[None]).reshape(-1, 2)


def set_contours(points, offsets, types):
    _state["contours"] = contour_lines(points, offsets, types)
    _state["batches"] = None
    tag_redraw()


def set_boxes(boxes):
    _state["boxes"] = box_lines(boxes)
    _state["batches"] = None
    tag_redraw()


def clear():
    _state["contours"] = None
    _state["boxes"] = None
    _state["batches"] = None
    tag_redraw()


def has_data():
    return _state["contours"] is not None or _state["boxes"] is not None


def tag_redraw():
    window_manager = getattr(bpy.context, "window_manager", None)
    if window_manager is None or bpy.app.background:
        return
    for window in window_manager.windows:
        for area in window.screen.areas:
            if area.type == 'VIEW_3D':
                area.tag_redraw()


def uniform_color_shader():
    """4.x names it UNIFORM_COLOR, 3.x 3D_UNIFORM_COLOR: try the new name first."""
    import gpu
    if _state["shader"] is None:
        try:
            _state["shader"] = gpu.shader.from_builtin('UNIFORM_COLOR')
        except (ValueError, TypeError, SystemError):
            _state["shader"] = gpu.shader.from_builtin('3D_UNIFORM_COLOR')
    return _state["shader"]


def _build_batches():
    from gpu_extras.batch import batch_for_shader
    shader = uniform_color_shader()
    batches = []
    for key, color in (("contours", CONTOUR_COLOR), ("boxes", BOX_COLOR)):
        data = _state[key]
        if data is None or len(data[1]) == 0:
            batches.append((key, None, color))
            continue
        coords, indices = data
        batches.append((key, batch_for_shader(shader, 'LINES', {"pos": coords},
                                              indices=indices), color))
    return batches


def draw():
    if bpy.app.background or not has_data():
        return
    props = getattr(bpy.context.scene, "cloth_untangle", None)
    if props is None:
        return
    import gpu
    if _state["batches"] is None:
        _state["batches"] = _build_batches()
    shader = uniform_color_shader()
    visible = {"contours": props.show_contours, "boxes": props.show_bvh}
    gpu.state.blend_set('ALPHA')
    gpu.state.depth_test_set('NONE')
    for key, batch, color in _state["batches"]:
        if batch is None or not visible[key]:
            continue
        gpu.state.line_width_set(3.0 if key == "contours" else 1.0)
        shader.bind()
        shader.uniform_float("color", color)
        batch.draw(shader)
    gpu.state.line_width_set(1.0)
    gpu.state.blend_set('NONE')


def register():
    _state["handler"] = bpy.types.SpaceView3D.draw_handler_add(draw, (), 'WINDOW', 'POST_VIEW')


def unregister():
    if _state["handler"] is not None:
        bpy.types.SpaceView3D.draw_handler_remove(_state["handler"], 'WINDOW')
    _state.update(contours=None, boxes=None, batches=None, handler=None, shader=None)


def handler_installed():
    return _state["handler"] is not None
