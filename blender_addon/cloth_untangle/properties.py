"""Settings saved in the .blend: the panel's switches on the scene, scene roles on objects.

The switches mirror the library's Settings (native.Settings); settings_for() turns them into
one. Live figures (intersections, contours, ms per frame) are stored here too, so every panel
shows the same numbers and they survive a redraw.
"""

import dataclasses
import json

import bpy
from bpy.props import (BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty,
                       StringProperty)

from . import native

# The menus' labels and tooltips, keyed by the library's own names (native.METHODS and
# native.SCENES, read from ut_method_name/ut_scene_name) in the library's order. They are
# written here, not built from the library, because registering the add-on must not need the
# library loaded; tests/blender/test_scenes.py checks that the keys are the library's lists.
METHOD_ITEMS = (
    ('icm', "ICM", "Intersection Contour Minimization (Volino 2006): shortens each contour"),
    ('kikuchi', "Kikuchi 2025", "Pushes each intersecting triangle pair apart by its depth"),
    ('ye', "Ye 2017", "Treats loop, boundary and crease contours each their own way"),
    ('buffet', "Buffet 2019", "Orders layers (pieces) so the first is innermost"),
)

SCENE_ITEMS = (
    ('tangled-start', "Tangled Start", "A pinned sheet folded back through itself"),
    ('dropped-cloth', "Dropped Cloth", "A spinning sheet dropped on a small sphere"),
    ('two-sheets', "Two Sheets", "Two sheets, one turned by 45°, falling on one sphere"),
)

ROLE_ITEMS = (
    ('NONE', "None", "Not part of a cloth-untangle scene"),
    ('CLOTH', "Cloth", "A cloth piece of a cloth-untangle scene"),
    ('SPHERE', "Sphere", "A sphere collider of a cloth-untangle scene"),
    ('GROUND', "Ground", "The ground plane of a cloth-untangle scene"),
)


def _redraw(self, context):
    screen = getattr(context, "screen", None)
    if screen is None:
        return
    for area in screen.areas:
        if area.type in {'VIEW_3D', 'PROPERTIES'}:
            area.tag_redraw()


class ClothUntangleSettings(bpy.types.PropertyGroup):
    untangle: BoolProperty(name="Untangle", default=True, update=_redraw,
                           description="Resolve intersections (off: the cloth tangles freely)")
    method: EnumProperty(name="Method", items=METHOD_ITEMS, default='icm', update=_redraw,
                         description="How intersections are resolved")
    response_strength: FloatProperty(
        name="Strength", default=1.0, min=0.0, soft_max=5.0, max=100.0, update=_redraw,
        description="Untangling move per frame, in particle spacings")
    thickness: FloatProperty(
        name="Thickness", default=0.01, min=0.0, soft_max=1.0, max=1000.0, subtype='DISTANCE', unit='LENGTH',
        precision=4, description="Distance kept between close cloth parts (Untangle and Bake)")
    iterations: IntProperty(name="Solver Iterations", default=10, min=1, max=200,
                            description="Solver iterations per frame (Untangle and Bake)")
    max_iterations: IntProperty(
        name="Max Iterations", default=1000, min=1, max=100000,
        description="Untangling gives up after this many frames of its own")
    strain_limit: FloatProperty(
        name="Strain Limit", default=0.045, min=0.0, max=1.0, precision=3,
        description="Most any edge may stretch or shrink against its input while untangling "
                    "(Untangle and Bake; 0: no limit)")
    keep_seams_apart: BoolProperty(
        name="Keep Seams Apart", default=False,
        description="Do not sew vertices at one position along border edges that run together "
                    "(sewn by default, so sewn panels stay sewn); for slits modelled on purpose "
                    "(Untangle and Bake)")
    independent_frames: BoolProperty(
        name="Independent Frames", default=False,
        description="Solve every cached frame alone instead of carrying the correction on")
    cache_directory: StringProperty(
        name="Cache Folder", default="", subtype='DIR_PATH',
        description="Where baked PC2 files go (empty: next to the .blend file)")
    scene_frames: IntProperty(name="Frames", default=200, min=1, max=100000,
                              description="Frames written by Bake Scene")
    show_contours: BoolProperty(name="Show Contours", default=True, update=_redraw,
                                description="Draw intersection contours in the viewport")
    show_bvh: BoolProperty(name="Show BVH", default=False, update=_redraw,
                           description="Draw the BVH nodes that normal-cone culling skipped")

    # Live figures of the last untangle, detection or simulation frame.
    stat_pairs: IntProperty(name="Intersections", default=0)
    stat_contours_loop: IntProperty(name="Loops", default=0)
    stat_contours_boundary: IntProperty(name="Boundary", default=0)
    stat_contours_crease: IntProperty(name="Crease", default=0)
    stat_culled_nodes: IntProperty(name="Culled Nodes", default=0)
    stat_ms: FloatProperty(name="ms per Frame", default=0.0, precision=2)
    stat_frame: IntProperty(name="Frame", default=0)
    status: StringProperty(name="Status", default="")


class ClothUntangleObjectSettings(bpy.types.PropertyGroup):
    role: EnumProperty(name="Role", items=ROLE_ITEMS, default='NONE')
    scene_name: StringProperty(name="Scene", default="")
    scene_group: StringProperty(name="Scene Group", default="",
                                description="Identifies the objects one Add Scene created")
    piece: IntProperty(name="Piece", default=0, min=0)
    settings_json: StringProperty(name="Scene Settings", default="",
                                  description="The scene's own library settings, as JSON")
    time_step: FloatProperty(name="Time Step", default=1.0 / 60.0, min=1e-6, precision=5)
    thickness: FloatProperty(name="Thickness", default=0.01, min=0.0, subtype='DISTANCE',
                             unit='LENGTH', precision=4)
    iterations: IntProperty(name="Solver Iterations", default=10, min=1)
    radius: FloatProperty(name="Radius", default=0.0, min=0.0, subtype='DISTANCE', unit='LENGTH')
    disabled_modifiers: StringProperty(default="", description="Modifiers a bake disabled")
    cache_file: StringProperty(name="Cache File", default="", subtype='FILE_PATH')


def settings_for(props, base=None):
    """The library settings for the panel's switches, on top of base (default: library defaults)."""
    if base is None:
        base = native.Settings.defaults()
    return dataclasses.replace(base, untangle=bool(props.untangle), method=props.method,
                               response_strength=float(props.response_strength),
                               thickness=float(props.thickness),
                               iterations=int(props.iterations))


def scene_switches(props, base):
    """Only the switches a running scene takes live (its thickness and timing stay its own)."""
    return dataclasses.replace(base, untangle=bool(props.untangle), method=props.method,
                               response_strength=float(props.response_strength))


def settings_to_json(settings):
    return json.dumps(dataclasses.asdict(settings))


def settings_from_json(text):
    values = json.loads(text)
    if "gravity" in values:
        values["gravity"] = tuple(values["gravity"])
    known = {field.name for field in dataclasses.fields(native.Settings)}
    return native.Settings(**{k: v for k, v in values.items() if k in known})


def store_stats(props, stats, ms=None):
    """Copies a native stats/detect/untangle dict into the live figures."""
    if "pairs" in stats:
        props.stat_pairs = int(stats["pairs"])
    contours = stats.get("contours") or stats.get("contours_left") or {}
    props.stat_contours_loop = int(contours.get("loop", 0))
    props.stat_contours_boundary = int(contours.get("boundary", 0))
    props.stat_contours_crease = int(contours.get("crease", 0))
    if "culled_nodes" in stats:
        props.stat_culled_nodes = int(stats["culled_nodes"])
    if ms is None and isinstance(stats.get("ms"), dict):
        ms = stats["ms"].get("total")
    if ms is not None:
        props.stat_ms = float(ms)
    if "frame" in stats:
        props.stat_frame = int(stats["frame"])


classes = (ClothUntangleSettings, ClothUntangleObjectSettings)


def register():
    for cls in classes:
        bpy.utils.register_class(cls)
    bpy.types.Scene.cloth_untangle = PointerProperty(type=ClothUntangleSettings)
    bpy.types.Object.cloth_untangle = PointerProperty(type=ClothUntangleObjectSettings)


def unregister():
    del bpy.types.Object.cloth_untangle
    del bpy.types.Scene.cloth_untangle
    for cls in reversed(classes):
        bpy.utils.unregister_class(cls)
