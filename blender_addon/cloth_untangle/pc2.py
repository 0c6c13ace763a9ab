"""PC2 point caches (the format Blender's Mesh Cache modifier reads) and the modifier set-up.

A PC2 file is a 32-byte header (b"POINTCACHE2\\0", version 1, vertex count, start frame,
sampling, frame count) followed by float32 xyz per vertex per frame, in object space.
Reading and writing need only numpy, so this module is usable (and testable) without bpy.
"""

import json
import os
import struct

import numpy as np

SIGNATURE = b"POINTCACHE2\0"
HEADER = struct.Struct("<12siiffi")
CACHE_MODIFIER_NAME = "Untangled Cache"


class Pc2Error(Exception):
    pass


def _checked_frames(frames):
    frames = np.ascontiguousarray(frames, dtype="<f4")
    if frames.ndim != 3 or frames.shape[2] != 3:
        raise Pc2Error(f"PC2 frames must have the shape (frames, vertices, 3), got {frames.shape}")
    if frames.shape[0] == 0:
        raise Pc2Error("a PC2 cache needs at least one frame")
    if not np.isfinite(frames).all():
        raise Pc2Error("refusing to write non-finite positions to a PC2 cache")
    return frames


def write_all(caches, start=1.0, sampling=1.0):
    """Writes (path, frames (F, n, 3)) pairs all or none: every file goes to path.part first and
    is renamed once all are written, so a reader never sees a half-written file and a failed
    bake leaves the previous caches as they were (the .part files are removed)."""
    caches = [(path, _checked_frames(frames)) for path, frames in caches]
    written = []
    try:
        for path, frames in caches:
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            temporary = path + ".part"
            written.append(temporary)
            with open(temporary, "wb") as stream:
                stream.write(HEADER.pack(SIGNATURE, 1, frames.shape[1], float(start),
                                         float(sampling), frames.shape[0]))
                stream.write(frames.tobytes())
    except BaseException:
        for temporary in written:
            try:
                os.remove(temporary)
            except OSError:
                pass
        raise
    for path, _ in caches:
        os.replace(path + ".part", path)


def write(path, frames, start=1.0, sampling=1.0):
    """Writes frames (F, n, 3) to path atomically."""
    write_all([(path, frames)], start, sampling)


def read_header(path):
    with open(path, "rb") as stream:
        raw = stream.read(HEADER.size)
    if len(raw) != HEADER.size:
        raise Pc2Error(f"{path}: shorter than the 32-byte PC2 header")
    signature, version, vertices, start, sampling, count = HEADER.unpack(raw)
    if signature != SIGNATURE:
        raise Pc2Error(f"{path}: not a PC2 file (signature {signature!r})")
    return {"version": version, "vertices": vertices, "start": start, "sampling": sampling,
            "frames": count}


def read(path):
    """Returns (header dict, frames (F, n, 3) float32); checks the size against the header."""
    header = read_header(path)
    data = np.fromfile(path, dtype="<f4", offset=HEADER.size)
    expected = header["frames"] * header["vertices"] * 3
    if data.size != expected:
        raise Pc2Error(f"{path}: header promises {header['frames']} frames of "
                       f"{header['vertices']} vertices, the file holds {data.size} floats")
    return header, data.reshape(header["frames"], header["vertices"], 3)


def _settings(obj):
    return obj.cloth_untangle


def remembered_disabled_modifiers(obj):
    """{modifier name: [show_viewport, show_render]} as they were before the bake."""
    try:
        remembered = json.loads(_settings(obj).disabled_modifiers or "{}")
    except ValueError:
        return {}
    return remembered if isinstance(remembered, dict) else {}


def detach(obj):
    """Removes the cache modifier a previous bake added and re-enables what that bake disabled."""
    modifier = obj.modifiers.get(CACHE_MODIFIER_NAME)
    if modifier is not None and modifier.type == 'MESH_CACHE':
        obj.modifiers.remove(modifier)
    for name, (viewport, render) in remembered_disabled_modifiers(obj).items():
        other = obj.modifiers.get(name)
        if other is not None:
            other.show_viewport = bool(viewport)
            other.show_render = bool(render)
    _settings(obj).disabled_modifiers = ""
    _settings(obj).cache_file = ""


def attach(obj, filepath, frame_start):
    """Adds a Mesh Cache modifier playing filepath at the end of the stack.

    The deformers before it stay in place but are disabled in the viewport and the render, so
    the cache is what plays, and detach() can bring them back.
    """
    detach(obj)
    disabled = {}
    for modifier in obj.modifiers:
        if modifier.show_viewport or modifier.show_render:
            disabled[modifier.name] = [modifier.show_viewport, modifier.show_render]
            modifier.show_viewport = False
            modifier.show_render = False
    cache = obj.modifiers.new(CACHE_MODIFIER_NAME, 'MESH_CACHE')
    cache.cache_format = 'PC2'
    cache.filepath = filepath
    cache.frame_start = frame_start
    cache.frame_scale = 1.0
    cache.play_mode = 'SCENE'
    cache.time_mode = 'FRAME'
    cache.deform_mode = 'OVERWRITE'
    cache.interpolation = 'LINEAR'
    _settings(obj).disabled_modifiers = json.dumps(disabled)
    _settings(obj).cache_file = filepath
    return cache
