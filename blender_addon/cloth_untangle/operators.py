"""The add-on's operators: untangle the selection, bake clean caches, build and run the scenes.

Everything reaches the engine through native.py. Each operator reads Blender data into numpy,
calls the library, and only then writes back, so a failure at any point leaves the meshes as
they were and becomes one report.
"""

import os
import threading
import time
import uuid

import bpy
import numpy as np
from bpy.props import EnumProperty, StringProperty
from mathutils import Vector, geometry

from . import meshdata, native, overlay, pc2, properties
from .meshdata import AddonError

_ERRORS = (native.UntangleError, AddonError, pc2.Pc2Error, OSError)


def _refuse(cls, message):
    # poll_message_set exists from Blender 3.0 on; older versions just grey the button out.
    if hasattr(cls, "poll_message_set"):
        cls.poll_message_set(message)
    return False


def selected_meshes(context):
    return sorted((obj for obj in context.selected_objects if obj.type == 'MESH'),
                  key=lambda obj: obj.name)


def _poll_selection(cls, context, modes=('OBJECT',)):
    if context.mode not in modes:
        return _refuse(cls, "Switch to Object Mode first")
    if not selected_meshes(context):
        return _refuse(cls, "Select one or more mesh objects")
    return True


def _fail(operator, props, error):
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


# --- Untangle Selected ---------------------------------------------------------------------


class CLOTH_UNTANGLE_OT_untangle_selected(bpy.types.Operator):
    """Remove intersections from the selected meshes, treated as one cloth system"""
    bl_idname = "cloth_untangle.untangle_selected"
    bl_label = "Untangle Selected"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _poll_selection(cls, context)

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
                    progress=lambda iteration, _total, _pairs: (
                        window_manager.progress_update(iteration), True)[1])
            finally:
                window_manager.progress_end()
            meshdata.check_result(captures, positions)
        except _ERRORS as error:
            return _fail(self, props, error)

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


# --- Bake Untangled Cache ------------------------------------------------------------------


def cache_folder(context, override=""):
    folder = override or context.scene.cloth_untangle.cache_directory
    if folder.startswith("//") and not bpy.data.filepath:
        raise AddonError(f"The Cache Folder '{folder}' is relative to the .blend file, which is "
                         f"not saved yet: save it first, or choose an absolute folder")
    if folder:
        return bpy.path.abspath(folder)
    if not bpy.data.filepath:
        raise AddonError("Save the .blend file first, or choose a Cache Folder")
    return os.path.dirname(bpy.data.filepath)


def cache_paths(folder, objects, suffix):
    """One PC2 path per object. Names that clean to the same file name ("Cloth.001" and
    "Cloth_001") get _2, _3, ... in object order, so two objects never share a cache."""
    paths, taken = [], set()
    for obj in objects:
        stem = bpy.path.clean_name(obj.name) + suffix
        name, number = stem, 1
        while name.lower() in taken:
            number += 1
            name = f"{stem}_{number}"
        taken.add(name.lower())
        paths.append(os.path.join(folder, name + ".pc2"))
    return paths


def modifier_path(filepath):
    """Relative to the .blend (//) when it lies next to it, so the project can move."""
    if bpy.data.filepath:
        try:
            return bpy.path.relpath(filepath)
        except ValueError:
            pass
    return filepath


class BakeJob:
    """One bake: read every frame's evaluated positions, untangle the sequence, write PC2s.

    Used whole by execute() and step by step (with a worker thread for the solve) by the
    modal version, which can be cancelled with Esc.
    """

    def __init__(self, context, objects, folder):
        self.scene = context.scene
        self.objects = objects
        self.folder = folder
        self.frames = list(range(self.scene.frame_start, self.scene.frame_end + 1))
        self.original_frame = self.scene.frame_current
        self.positions = []   # per frame: (n_total, 3) world space
        self.matrices = []    # per frame: per object 4x4
        self.captures = None  # topology of the first frame
        self.saved_flags = {}
        self.result = None
        self.reports = []
        self.error = None
        self.cancel = threading.Event()
        self.done_frames = 0
        self._suspend_previous_caches()

    def _suspend_previous_caches(self):
        # A previous bake's cache (and the deformers it disabled) would hide the motion to read.
        for obj in self.objects:
            flags = {m.name: (m.show_viewport, m.show_render) for m in obj.modifiers}
            self.saved_flags[obj.name] = flags
            for name, (viewport, render) in pc2.remembered_disabled_modifiers(obj).items():
                modifier = obj.modifiers.get(name)
                if modifier is not None:
                    modifier.show_viewport, modifier.show_render = bool(viewport), bool(render)
            cache = obj.modifiers.get(pc2.CACHE_MODIFIER_NAME)
            if cache is not None:
                cache.show_viewport = cache.show_render = False

    def restore(self):
        """Puts the modifier flags and the frame back as they were (nothing changed)."""
        for obj in self.objects:
            for name, (viewport, render) in self.saved_flags.get(obj.name, {}).items():
                modifier = obj.modifiers.get(name)
                if modifier is not None:
                    modifier.show_viewport, modifier.show_render = viewport, render
        self.scene.frame_set(self.original_frame)

    def read_frame(self, context, index):
        self.scene.frame_set(self.frames[index])
        captures = meshdata.capture_all(self.objects, context.evaluated_depsgraph_get())
        if self.captures is None:
            self.captures = captures
        else:
            for first, now in zip(self.captures, captures):
                if len(now.world) != len(first.world):
                    raise AddonError(f"'{now.obj.name}' changes its vertex count during the "
                                     f"frame range (frame {self.frames[index]}); a cache needs "
                                     f"a fixed vertex count")
        self.positions.append(np.concatenate([capture.world for capture in captures]))
        self.matrices.append([capture.matrix for capture in captures])

    def read_all(self, context):
        for index in range(len(self.frames)):
            self.read_frame(context, index)

    def solve(self, settings, independent, max_iterations, strain_limit):
        def progress(frame, _frames, _pairs):
            self.done_frames = frame
            return not self.cancel.is_set()
        try:
            self.result, self.reports = native.untangle_sequence(
                [capture.piece() for capture in self.captures], np.stack(self.positions),
                settings, independent=independent, max_iterations=max_iterations,
                strain_limit=strain_limit, progress=progress)
        except Exception as error:  # handed to the main thread, which reports it
            self.error = error

    def write(self):
        """Writes one PC2 per object with the frames finished so far; returns the paths."""
        if self.result is None or len(self.result) == 0:
            raise AddonError("No frame was finished; nothing was written")
        finished = len(self.result)
        if not np.isfinite(self.result).all():
            raise AddonError("the library returned non-finite positions; nothing was written")
        # Every object's frames first, then all files or none: a failure leaves the previous
        # caches as they were.
        caches = []
        start = 0
        for index, obj in enumerate(self.objects):
            count = len(self.captures[index].world)
            world = self.result[:, start:start + count]
            caches.append(np.stack([meshdata.to_local(world[f], self.matrices[f][index], obj.name)
                                    for f in range(finished)]))
            start += count
        paths = cache_paths(self.folder, self.objects, "_untangled")
        pc2.write_all(zip(paths, caches), start=self.frames[0])
        self.scene.frame_set(self.original_frame)
        for obj, path in zip(self.objects, paths):
            pc2.attach(obj, modifier_path(path), self.frames[0])
        return paths

    def summary(self):
        pairs_in = max((r["pairs_before"] for r in self.reports), default=0)
        pairs_out = max((r["pairs_after"] for r in self.reports), default=0)
        return pairs_in, pairs_out


class CLOTH_UNTANGLE_OT_bake_cache(bpy.types.Operator):
    """Untangle every frame of the selected meshes' animation and bake it to PC2 caches
played by a Mesh Cache modifier"""
    bl_idname = "cloth_untangle.bake_cache"
    bl_label = "Bake Untangled Cache"
    bl_options = {'REGISTER', 'UNDO'}

    directory: StringProperty(name="Folder", subtype='DIR_PATH', default="",
                              description="Where the PC2 files go (empty: the panel's folder)")

    @classmethod
    def poll(cls, context):
        if not _poll_selection(cls, context):
            return False
        if context.scene.frame_end < context.scene.frame_start:
            return _refuse(cls, "The scene's frame range is empty")
        return True

    def _start(self, context):
        props = context.scene.cloth_untangle
        self._settings = properties.settings_for(props)
        self._job = BakeJob(context, selected_meshes(context),
                            cache_folder(context, self.directory))

    def _finish(self, context):
        props = context.scene.cloth_untangle
        job = self._job
        if job.error is not None:
            job.restore()
            return _fail(self, props, job.error)
        try:
            paths = job.write()
        except _ERRORS as error:
            job.restore()
            return _fail(self, props, error)
        pairs_in, pairs_out = job.summary()
        finished = len(job.result)
        props.stat_pairs = pairs_out
        objects = f"{len(paths)} object" + ("" if len(paths) == 1 else "s")
        text = (f"Baked {finished} frames of {objects}: max intersections per frame "
                f"{pairs_in} → {pairs_out}; cache in {job.folder}")
        if finished < len(job.frames):
            props.status = (f"Cancelled: {text} (frames {job.frames[0]}–"
                            f"{job.frames[0] + finished - 1} of {job.frames[-1]})")
            self.report({'WARNING'}, props.status)
        else:
            props.status = text
            self.report({'WARNING'} if pairs_out else {'INFO'}, text)
        return {'FINISHED'}

    def execute(self, context):
        props = context.scene.cloth_untangle
        window_manager = context.window_manager
        try:
            self._start(context)
        except _ERRORS as error:
            return _fail(self, props, error)
        job = self._job
        window_manager.progress_begin(0, 2 * len(job.frames))
        try:
            for index in range(len(job.frames)):
                job.read_frame(context, index)
                window_manager.progress_update(index)
            job.solve(self._settings, props.independent_frames, props.max_iterations,
                      props.strain_limit)
        except _ERRORS as error:
            job.restore()
            return _fail(self, props, error)
        finally:
            window_manager.progress_end()
        return self._finish(context)

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        props = context.scene.cloth_untangle
        try:
            self._start(context)
        except _ERRORS as error:
            return _fail(self, props, error)
        self._index = 0
        self._thread = None
        window_manager = context.window_manager
        window_manager.progress_begin(0, 2 * len(self._job.frames))
        self._timer = window_manager.event_timer_add(0.02, window=context.window)
        window_manager.modal_handler_add(self)
        props.status = "Reading frames… (Esc cancels)"
        return {'RUNNING_MODAL'}

    def _stop(self, context):
        context.window_manager.event_timer_remove(self._timer)
        context.window_manager.progress_end()

    def cancel(self, context):
        # Blender ends the modal without an event (a file is loaded, the window closes): the
        # worker thread stops after its frame, nothing is written, and what the bake changed
        # (modifier flags, the frame) goes back as far as the objects still exist.
        self._job.cancel.set()
        try:
            self._stop(context)
            self._job.restore()
        except (ReferenceError, *_ERRORS):
            pass

    def modal(self, context, event):
        job = self._job
        props = context.scene.cloth_untangle
        if event.type == 'ESC' and event.value == 'PRESS':
            if self._thread is None:
                self._stop(context)
                job.restore()
                props.status = "Bake cancelled while reading frames; nothing changed"
                self.report({'WARNING'}, props.status)
                return {'CANCELLED'}
            job.cancel.set()
            props.status = "Cancelling after the current frame…"
        if event.type != 'TIMER':
            return {'RUNNING_MODAL'}
        if self._thread is None:
            try:
                deadline = time.perf_counter() + 0.05
                while self._index < len(job.frames) and time.perf_counter() < deadline:
                    job.read_frame(context, self._index)
                    self._index += 1
            except _ERRORS as error:
                self._stop(context)
                job.restore()
                return _fail(self, props, error)
            except Exception:  # a bug: clean up, and let Blender show the traceback
                self._stop(context)
                try:
                    job.restore()
                except ReferenceError:  # the bug was a deleted object
                    pass
                raise
            context.window_manager.progress_update(self._index)
            if self._index == len(job.frames):
                self._thread = threading.Thread(
                    target=job.solve, args=(self._settings, props.independent_frames,
                                            props.max_iterations, props.strain_limit),
                    daemon=True)
                self._thread.start()
                props.status = "Untangling frames… (Esc cancels, keeps the frames done)"
            return {'RUNNING_MODAL'}
        context.window_manager.progress_update(len(job.frames) + job.done_frames)
        if self._thread.is_alive():
            return {'RUNNING_MODAL'}
        self._stop(context)
        return self._finish(context)


# --- Scenes --------------------------------------------------------------------------------

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
            return _refuse(cls, "Switch to Object Mode first")
        return True

    def execute(self, context):
        props = context.scene.cloth_untangle
        try:
            world = native.World.from_scene(self.scene)
            settings = world.scene_settings()
            spheres, ground = _scene_colliders(world)
            pieces = [(world.positions(i), *world.faces(i)) for i in range(world.piece_count)]
        except _ERRORS as error:
            return _fail(self, props, error)
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
        return _refuse(cls, "Switch to Object Mode first")
    cloths = scene_cloths(context)
    if not cloths:
        return _refuse(cls, "Make an object of an added scene active (Add Scene first)")
    if cloths[0].cloth_untangle.scene_group in _running_scenes:
        # A second run would step the same world from two timers; a bake would be overwritten.
        return _refuse(cls, "Run Scene is running on this scene: Esc or right-click stops it")
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
        except _ERRORS as error:
            return _fail(self, props, error)
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
        except (ReferenceError, *_ERRORS):
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
        except _ERRORS as error:
            self._stop(context)
            return _fail(self, props, error)
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
        except _ERRORS as error:
            return _fail(self, props, error)
        try:
            check_scene_cloths(cloths, world.piece_vertex_counts())
        except _ERRORS as error:
            world.close()
            return _fail(self, props, error)
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
        except _ERRORS as error:
            return _fail(self, props, error)
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


# --- Show Intersections --------------------------------------------------------------------


class CLOTH_UNTANGLE_OT_show_intersections(bpy.types.Operator):
    """Select the faces of the selected meshes that intersect (Edit Mode) and draw the contours"""
    bl_idname = "cloth_untangle.show_intersections"
    bl_label = "Show Intersections"
    bl_options = {'REGISTER', 'UNDO'}

    @classmethod
    def poll(cls, context):
        return _poll_selection(cls, context, modes=('OBJECT', 'EDIT_MESH'))

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
        except _ERRORS as error:
            if was_editing:
                bpy.ops.object.mode_set(mode='EDIT')  # as the user left it
            return _fail(self, props, error)
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
