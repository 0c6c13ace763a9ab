"""The reference scenes in Blender: Add Scene builds one as objects, Run Scene steps it live in
the viewport (modal, grab with the left mouse), Bake Scene writes its frames as a PC2 cache.
The world of a scene group is kept between runs."""

import uuid

import bpy
import numpy as np
from bpy.props import EnumProperty, StringProperty
from mathutils import Vector, geometry

from . import meshdata, native, pc2, properties
from .meshdata import AddonError
from .ops_common import ADDON_ERRORS, fail, refuse, show_world_overlay
from .ops_bake_cache import cache_folder, cache_paths, modifier_path


_live_worlds = {}  # scene group id -> native.World kept between Run Scene sessions


def scene_cloths(context, obj=None):
    """The cloth objects of the scene group of obj (default: the active object), by piece."""
    obj = obj or context.active_object
    if obj is None or obj.cloth_untangle.role == 'NONE':
        return []
    group = obj.cloth_untangle.scene_group
    cloths = [other for other in context.scene.objects
              if other.cloth_untangle.role == 'CLOTH' and other.cloth_untangle.scene_group == group]
    return sorted(cloths, key=lambda other: other.cloth_untangle.piece)


def _scene_settings(cloth):
    """The scene's own settings as stored on its cloth object, with the object's edits."""
    settings = properties.settings_from_json(cloth.cloth_untangle.settings_json)
    stored = cloth.cloth_untangle
    return properties.dataclasses.replace(settings, thickness=float(stored.thickness),
                                          iterations=int(stored.iterations),
                                          time_step=float(stored.time_step))


def _scene_colliders(world):
    """Spheres [((x, y, z), radius)] and ground height (or None) of a scene world."""
    return world.spheres(), world.ground_height()


def new_scene_world(cloths, props):
    """A fresh world of the cloths' scene with the panel's switches."""
    world = native.World.from_scene(cloths[0].cloth_untangle.scene_name)
    try:
        world.set_settings(properties.scene_switches(props, _scene_settings(cloths[0])))
    except Exception:
        world.close()
        raise
    return world


def check_scene_cloths(cloths, counts):
    """The cloths must be the scene's pieces, each once and with its vertex count: a duplicated,
    deleted or edited cloth cannot run in the scene's world."""
    pieces = [cloth.cloth_untangle.piece for cloth in cloths]
    if pieces != list(range(len(counts))):
        raise AddonError(f"the scene has {len(counts)} cloth pieces, but its objects are pieces "
                         f"{pieces} (a cloth was duplicated or deleted); delete the extra "
                         f"objects or add the scene again")
    for index, cloth in enumerate(cloths):
        if len(cloth.data.vertices) != counts[index]:
            raise AddonError(f"'{cloth.name}' has {len(cloth.data.vertices)} vertices, the "
                             f"scene's piece {index} has {counts[index]}; add the scene again")


def live_world(context, cloths):
    """The running world of a scene group (built on first use or after a reload), at the meshes'
    current positions: an edit, a move or an Undo between runs is what the next run starts
    from."""
    group = cloths[0].cloth_untangle.scene_group
    world = _live_worlds.get(group)
    fresh = world is None
    if fresh:
        world = new_scene_world(cloths, context.scene.cloth_untangle)
    try:
        check_scene_cloths(cloths, world.piece_vertex_counts())
        for index, cloth in enumerate(cloths):
            positions = meshdata.to_world(meshdata.mesh_positions(cloth.data),
                                          cloth.matrix_world)
            world.set_positions(positions, piece=index)
    except Exception:
        if fresh:
            world.close()
        raise
    _live_worlds[group] = world
    return world


def scene_step(scene, world, cloths, frames=1):
    """One tick of Run Scene: take the panel's switches, step, write the meshes, update stats.

    A plain function (no event, no window), so tests and scripts can drive a scene directly.
    """
    props = scene.cloth_untangle
    current = world.scene_settings()
    wanted = properties.scene_switches(props, current)
    if wanted != current:
        world.set_settings(wanted)
    world.step(frames)
    for index, cloth in enumerate(cloths):
        meshdata.write_world_positions(cloth, world.positions(index))
    stats = world.stats()
    properties.store_stats(props, stats)
    show_world_overlay(props, world)
    return stats


def _add_object(context, name, mesh, role, group, scene_name):
    obj = bpy.data.objects.new(name, mesh)
    context.collection.objects.link(obj)
    obj.cloth_untangle.role = role
    obj.cloth_untangle.scene_group = group
    obj.cloth_untangle.scene_name = scene_name
    return obj


def _sphere_mesh(name, center, radius):
    import bmesh
    mesh = bpy.data.meshes.new(name)
    sphere = bmesh.new()
    bmesh.ops.create_uvsphere(sphere, u_segments=32, v_segments=16, radius=radius)
    bmesh.ops.translate(sphere, vec=center, verts=sphere.verts)
    sphere.to_mesh(mesh)
    sphere.free()
    for polygon in mesh.polygons:  # a few hundred faces: smooth shading for looks
        polygon.use_smooth = True
    return mesh


def _ground_mesh(name, height, half_size):
    corners = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], dtype=np.float32) * half_size
    positions = np.column_stack([corners, np.full(4, height, dtype=np.float32)])
    return meshdata.new_mesh(bpy.data, name, positions, [4], [0, 1, 2, 3])


class CLOTH_UNTANGLE_OT_add_scene(bpy.types.Operator):
    """Add one of the reference scenes (cloth, sphere, ground) as Blender objects"""
    bl_idname = "cloth_untangle.add_scene"
    bl_label = "Add Scene"
    bl_options = {'REGISTER', 'UNDO'}

    scene: EnumProperty(name="Scene", items=properties.SCENE_ITEMS, default='tangled-start')

    @classmethod
    def poll(cls, context):
        if context.mode != 'OBJECT':
            return refuse(cls, "Switch to Object Mode first")
        return True

    def execute(self, context):
        props = context.scene.cloth_untangle
        try:
            world = native.World.from_scene(self.scene)
            settings = world.scene_settings()
            spheres, ground = _scene_colliders(world)
            pieces = [(world.positions(i), *world.faces(i)) for i in range(world.piece_count)]
        except ADDON_ERRORS as error:
            return fail(self, props, error)
        title = dict((key, label) for key, label, _ in properties.SCENE_ITEMS)[self.scene]
        group = uuid.uuid4().hex[:12]
        for obj in context.selected_objects:
            obj.select_set(False)
        cloths = []
        for index, (positions, sizes, indices) in enumerate(pieces):
            name = title + (" Cloth" if len(pieces) == 1 else f" Cloth {index + 1}")
            mesh = meshdata.new_mesh(bpy.data, name, positions, sizes, indices)
            cloth = _add_object(context, name, mesh, 'CLOTH', group, self.scene)
            stored = cloth.cloth_untangle
            stored.piece = index
            stored.settings_json = properties.settings_to_json(settings)
            stored.thickness = settings.thickness
            stored.iterations = settings.iterations
            stored.time_step = settings.time_step
            cloth.select_set(True)
            cloths.append(cloth)
        extent = float(np.abs(np.concatenate([p for p, _, _ in pieces])[:, :2]).max())
        for index, (center, radius) in enumerate(spheres):
            name = title + " Sphere" + ("" if len(spheres) == 1 else f" {index + 1}")
            sphere = _add_object(context, name, _sphere_mesh(name, center, radius), 'SPHERE',
                                 group, self.scene)
            sphere.cloth_untangle.radius = radius
            sphere.display_type = 'SOLID'
        if ground is not None:
            _add_object(context, title + " Ground",
                        _ground_mesh(title + " Ground", ground, 2.0 * extent + 1.0),
                        'GROUND', group, self.scene)
        context.view_layer.objects.active = cloths[0]
        old = _live_worlds.pop(group, None)
        if old is not None:
            old.close()
        _live_worlds[group] = world
        world.detect()
        properties.store_stats(props, world.stats())
        show_world_overlay(props, world)
        props.status = (f"Added {title}: {world.vertex_count} particles in {len(cloths)} "
                        f"piece{'' if len(cloths) == 1 else 's'}")
        self.report({'INFO'}, props.status)
        return {'FINISHED'}


_running_scenes = set()  # scene group ids with a Run Scene in progress


def _poll_scene(cls, context):
    if context.mode != 'OBJECT':
        return refuse(cls, "Switch to Object Mode first")
    cloths = scene_cloths(context)
    if not cloths:
        return refuse(cls, "Make an object of an added scene active (Add Scene first)")
    if cloths[0].cloth_untangle.scene_group in _running_scenes:
        # A second run would step the same world from two timers; a bake would be overwritten.
        return refuse(cls, "Run Scene is running on this scene: Esc or right-click stops it")
    return True


def _view3d_region(context):
    """The 3D View area, its main region and view data (the pointer's ray needs them)."""
    areas = [context.area] if context.area and context.area.type == 'VIEW_3D' else []
    areas += [area for area in context.screen.areas if area.type == 'VIEW_3D']
    for area in areas:
        for region in area.regions:
            if region.type == 'WINDOW':
                return area, region, area.spaces.active.region_3d
    return None, None, None


class CLOTH_UNTANGLE_OT_run_scene(bpy.types.Operator):
    """Run the scene live in the viewport: drag the cloth with the left mouse button,
Esc or right-click stops and keeps the state"""
    bl_idname = "cloth_untangle.run_scene"
    bl_label = "Run Scene"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _poll_scene(cls, context)

    def invoke(self, context, event):
        props = context.scene.cloth_untangle
        self._area, self._region, self._view = _view3d_region(context)
        if self._region is None:
            self.report({'ERROR'}, "Run Scene needs a 3D Viewport")
            return {'CANCELLED'}
        self._cloths = scene_cloths(context)
        try:
            self._world = live_world(context, self._cloths)
        except ADDON_ERRORS as error:
            return fail(self, props, error)
        for cloth in self._cloths:  # a baked scene cache would hide the live motion
            pc2.detach(cloth)
        edges = np.empty(len(self._cloths[0].data.edges) * 2, dtype=np.int32)
        self._cloths[0].data.edges.foreach_get("vertices", edges)
        co = meshdata.mesh_positions(self._cloths[0].data)
        pairs = edges.reshape(-1, 2)
        self._pick_radius = 2.0 * float(np.linalg.norm(co[pairs[:, 0]] - co[pairs[:, 1]],
                                                       axis=1).mean()) if len(pairs) else 0.1
        self._grab_plane = None
        self._group = self._cloths[0].cloth_untangle.scene_group
        _running_scenes.add(self._group)
        self._timer = context.window_manager.event_timer_add(1.0 / 60.0, window=context.window)
        context.window_manager.modal_handler_add(self)
        props.status = "Running: left-drag grabs the cloth, Esc or right-click stops"
        return {'RUNNING_MODAL'}

    def _inside(self, event):
        region = self._region
        x, y = event.mouse_x - region.x, event.mouse_y - region.y
        return 0 <= x < region.width and 0 <= y < region.height, (x, y)

    def _ray(self, coord):
        from bpy_extras import view3d_utils
        origin = view3d_utils.region_2d_to_origin_3d(self._region, self._view, coord)
        direction = view3d_utils.region_2d_to_vector_3d(self._region, self._view, coord)
        return np.array(origin), np.array(direction)

    def _grab(self, coord):
        origin, direction = self._ray(coord)
        if not self._world.grab_begin(tuple(origin), tuple(direction), self._pick_radius):
            return False
        # The drag plane faces the camera and goes through the particle under the pointer.
        points = self._world.positions().astype(np.float64) - origin
        along = points @ direction
        off_ray = np.linalg.norm(points - along[:, None] * direction, axis=1)
        candidates = np.flatnonzero((off_ray <= self._pick_radius) & (along > 0))
        depth = along[candidates[np.argmin(along[candidates])]] if len(candidates) else 1.0
        normal = np.array(self._view.view_rotation @ Vector((0.0, 0.0, 1.0)))  # toward the eye
        self._grab_plane = (origin + depth * direction, normal)
        return True

    def _drag(self, coord):
        origin, direction = self._ray(coord)
        point, normal = self._grab_plane
        target = geometry.intersect_line_plane(Vector(origin), Vector(origin + direction),
                                               Vector(point), Vector(normal))
        if target is not None:
            self._world.grab_move(tuple(target), tuple(normal))

    def _stop(self, context):
        _running_scenes.discard(self._group)
        context.window_manager.event_timer_remove(self._timer)
        context.scene.cloth_untangle.status = "Stopped; the cloth keeps its state"
        if self._grab_plane is not None:
            self._grab_plane = None
            self._world.grab_end()

    def cancel(self, context):
        # Blender ends the modal without an event (a file is loaded, the window closes): the
        # kept world must not stay grabbed.
        try:
            self._stop(context)
        except (ReferenceError, *ADDON_ERRORS):
            _running_scenes.discard(self._group)

    def modal(self, context, event):
        props = context.scene.cloth_untangle
        try:
            for cloth in self._cloths:
                cloth.name  # raises ReferenceError once the object is deleted
        except ReferenceError:
            self._stop(context)
            return {'CANCELLED'}
        try:
            if event.type in {'ESC', 'RIGHTMOUSE'} and event.value == 'PRESS':
                self._stop(context)
                return {'FINISHED'}
            if event.type == 'TIMER':
                scene_step(context.scene, self._world, self._cloths)
                self._area.tag_redraw()
                return {'PASS_THROUGH'}
            inside, coord = self._inside(event)
            if event.type == 'LEFTMOUSE':
                if event.value == 'PRESS' and inside and self._grab(coord):
                    return {'RUNNING_MODAL'}
                if event.value == 'RELEASE' and self._grab_plane is not None:
                    self._world.grab_end()  # the drag velocity stays: the cloth flies on
                    self._grab_plane = None
                    return {'RUNNING_MODAL'}
            if event.type == 'MOUSEMOVE' and self._grab_plane is not None:
                self._drag(coord)
                return {'RUNNING_MODAL'}
        except ADDON_ERRORS as error:
            self._stop(context)
            return fail(self, props, error)
        except Exception:  # a bug: stop the timer, and let Blender show the traceback
            self._stop(context)
            raise
        return {'PASS_THROUGH'}


class CLOTH_UNTANGLE_OT_bake_scene(bpy.types.Operator):
    """Simulate the scene from its start and bake the frames to a PC2 cache the timeline plays"""
    bl_idname = "cloth_untangle.bake_scene"
    bl_label = "Bake Scene"
    bl_options = {'REGISTER', 'UNDO'}

    directory: StringProperty(name="Folder", subtype='DIR_PATH', default="",
                              description="Where the PC2 files go (empty: the panel's folder)")

    @classmethod
    def poll(cls, context):
        return _poll_scene(cls, context)

    def execute(self, context):
        props = context.scene.cloth_untangle
        scene = context.scene
        cloths = scene_cloths(context)
        count = props.scene_frames
        window_manager = context.window_manager
        try:
            folder = cache_folder(context, self.directory)
            world = new_scene_world(cloths, props)
        except ADDON_ERRORS as error:
            return fail(self, props, error)
        try:
            check_scene_cloths(cloths, world.piece_vertex_counts())
        except ADDON_ERRORS as error:
            world.close()
            return fail(self, props, error)
        pairs = np.zeros(count, dtype=np.int64)
        window_manager.progress_begin(0, count)
        try:
            with world:
                counts = world.piece_vertex_counts()
                frames = [np.empty((count, n, 3), dtype=np.float32) for n in counts]
                world.detect()
                for frame in range(count):
                    if frame > 0:
                        world.step(1)
                    for index in range(len(cloths)):
                        frames[index][frame] = world.positions(index)
                    pairs[frame] = world.stats()["pairs"]
                    window_manager.progress_update(frame)
                caches = [meshdata.to_local(frames[index].reshape(-1, 3), cloth.matrix_world,
                                            cloth.name).reshape(frames[index].shape)
                          for index, cloth in enumerate(cloths)]
                paths = cache_paths(folder, cloths, "_scene")
                pc2.write_all(zip(paths, caches), start=scene.frame_start)
                properties.store_stats(props, world.stats())
                show_world_overlay(props, world)
        except ADDON_ERRORS as error:
            return fail(self, props, error)
        finally:
            window_manager.progress_end()
        for cloth, path in zip(cloths, paths):
            pc2.attach(cloth, modifier_path(path), scene.frame_start)
        scene.frame_end = max(scene.frame_end, scene.frame_start + count - 1)
        zero = np.flatnonzero(pairs == 0)
        settled = (f", 0 from frame {scene.frame_start + int(zero[0])}"
                   if len(zero) and (pairs[zero[0]:] == 0).all() else "")
        props.status = (f"Baked {count} frames: intersections {int(pairs[0])} → "
                        f"{int(pairs[-1])}{settled}; cache in {folder}")
        self.report({'INFO'}, props.status)
        return {'FINISHED'}
