"""Bake Untangled Cache: every frame of the selected meshes untangled in a background thread and
written as PC2 files (all or none), played back with Mesh Cache modifiers."""

import os
import threading
import time

import bpy
import numpy as np
from bpy.props import StringProperty

from . import meshdata, native, pc2, properties
from .meshdata import AddonError
from .ops_common import ADDON_ERRORS, fail, poll_selection, refuse, selected_meshes


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

    def solve(self, settings, independent, max_iterations, strain_limit, keep_seams_apart):
        def progress(frame, _frames, _pairs):
            self.done_frames = frame
            return not self.cancel.is_set()
        try:
            self.result, self.reports = native.untangle_sequence(
                [capture.piece() for capture in self.captures], np.stack(self.positions),
                settings, independent=independent, max_iterations=max_iterations,
                strain_limit=strain_limit, keep_seams_apart=keep_seams_apart, progress=progress)
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
        if not poll_selection(cls, context):
            return False
        if context.scene.frame_end < context.scene.frame_start:
            return refuse(cls, "The scene's frame range is empty")
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
            return fail(self, props, job.error)
        try:
            paths = job.write()
        except ADDON_ERRORS as error:
            job.restore()
            return fail(self, props, error)
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
        except ADDON_ERRORS as error:
            return fail(self, props, error)
        job = self._job
        window_manager.progress_begin(0, 2 * len(job.frames))
        try:
            for index in range(len(job.frames)):
                job.read_frame(context, index)
                window_manager.progress_update(index)
            job.solve(self._settings, props.independent_frames, props.max_iterations,
                      props.strain_limit, props.keep_seams_apart)
        except ADDON_ERRORS as error:
            job.restore()
            return fail(self, props, error)
        finally:
            window_manager.progress_end()
        return self._finish(context)

    def invoke(self, context, event):
        if bpy.app.background:
            return self.execute(context)
        props = context.scene.cloth_untangle
        try:
            self._start(context)
        except ADDON_ERRORS as error:
            return fail(self, props, error)
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
        except (ReferenceError, *ADDON_ERRORS):
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
            except ADDON_ERRORS as error:
                self._stop(context)
                job.restore()
                return fail(self, props, error)
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
                                            props.max_iterations, props.strain_limit,
                                            props.keep_seams_apart),
                    daemon=True)
                self._thread.start()
                props.status = "Untangling frames… (Esc cancels, keeps the frames done)"
            return {'RUNNING_MODAL'}
        context.window_manager.progress_update(len(job.frames) + job.done_frames)
        if self._thread.is_alive():
            return {'RUNNING_MODAL'}
        self._stop(context)
        return self._finish(context)
