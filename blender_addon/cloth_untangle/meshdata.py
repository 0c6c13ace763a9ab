"""Blender meshes to and from the numpy arrays the library takes, without per-vertex loops.

A Capture is one object's evaluated state (modifiers applied) in world space, the shape the
user sees; write_back() puts an untangled result into the object's mesh, or into a corrective
shape key when the evaluated mesh is not the base mesh.
"""

import numpy as np

from . import native

SHAPE_KEY_NAME = "Untangled"


class AddonError(Exception):
    """A problem with the Blender data, reported to the user like a library error."""


def mesh_positions(mesh):
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    return co.reshape(-1, 3)


def mesh_faces(mesh):
    """(face sizes, flat vertex indices) as uint32, in polygon order."""
    count = len(mesh.polygons)
    sizes = np.empty(count, dtype=np.int32)
    starts = np.empty(count, dtype=np.int32)
    mesh.polygons.foreach_get("loop_total", sizes)
    mesh.polygons.foreach_get("loop_start", starts)
    loops = np.empty(len(mesh.loops), dtype=np.int32)
    mesh.loops.foreach_get("vertex_index", loops)
    packed = np.zeros(count, dtype=np.int64)
    np.cumsum(sizes[:-1], out=packed[1:])
    if not np.array_equal(packed, starts):
        # Loops are not stored polygon after polygon: gather each polygon's run.
        loops = loops[np.repeat(starts - packed, sizes) + np.arange(int(sizes.sum()))]
    return sizes.view(np.uint32), loops[:int(sizes.sum())].view(np.uint32)


def to_world(local, matrix):
    m = np.asarray(matrix, dtype=np.float64)
    return (local @ m[:3, :3].T + m[:3, 3]).astype(np.float32)


def to_local(world, matrix, name="the object"):
    try:
        inverse = np.linalg.inv(np.asarray(matrix, dtype=np.float64))
    except np.linalg.LinAlgError:
        inverse = None
    if inverse is None or not np.isfinite(inverse).all():
        raise AddonError(f"'{name}' has a zero scale, so its mesh cannot take the result; "
                         f"fix its scale first; nothing was changed")
    return (np.asarray(world, dtype=np.float64) @ inverse[:3, :3].T + inverse[:3, 3]).astype(
        np.float32)


def check_finite(name, positions):
    finite = np.isfinite(positions).all(axis=1)
    if not finite.all():
        bad = np.flatnonzero(~finite)
        raise AddonError(f"'{name}' has non-finite coordinates (NaN or Inf) at {len(bad)} "
                         f"vertices, the first is vertex {int(bad[0])}; nothing was changed")


class Capture:
    """One mesh object as the depsgraph evaluates it, in world and object space."""

    def __init__(self, obj, depsgraph, allow_topology_change=False):
        self.obj = obj
        evaluated = obj.evaluated_get(depsgraph)
        self.matrix = np.array(evaluated.matrix_world, dtype=np.float64)
        mesh = evaluated.to_mesh()
        try:
            self.local = mesh_positions(mesh)
            self.face_sizes, self.face_indices = mesh_faces(mesh)
        finally:
            evaluated.to_mesh_clear()
        base = obj.data
        self.base_count = len(base.vertices)
        self.same_topology = (len(self.local) == self.base_count
                              and len(self.face_sizes) == len(base.polygons))
        if not self.same_topology:
            if not allow_topology_change:
                raise AddonError(
                    f"'{obj.name}': its modifiers change the topology ({len(self.local)} "
                    f"evaluated vertices, {self.base_count} in the mesh); apply or disable "
                    f"them first")
            self.local = mesh_positions(base)
            self.face_sizes, self.face_indices = mesh_faces(base)
            self.same_topology = True
            self.deformed = False
        else:
            self.deformed = (base.shape_keys is not None
                             or not np.array_equal(self.local, mesh_positions(base)))
        check_finite(obj.name, self.local)
        if len(self.face_sizes) == 0:
            raise AddonError(f"'{obj.name}' has no faces; cloth needs polygons")
        self.world = to_world(self.local, self.matrix)

    def piece(self, positions=None):
        return native.Piece(positions=self.world if positions is None else positions,
                            face_sizes=self.face_sizes, face_indices=self.face_indices)


def capture_all(objects, depsgraph, allow_topology_change=False):
    return [Capture(obj, depsgraph, allow_topology_change) for obj in objects]


def check_result(captures, positions):
    if len(positions) != len(captures):
        raise AddonError(f"the library returned {len(positions)} pieces for {len(captures)} "
                         f"objects; nothing was changed")
    for capture, result in zip(captures, positions):
        if np.shape(result) != capture.world.shape:
            raise AddonError(f"the library returned {np.shape(result)} positions for "
                             f"'{capture.obj.name}' ({capture.world.shape}); nothing was changed")
        check_finite(capture.obj.name, np.asarray(result))


# Modifiers that replace the shape of the mesh with one of their own (a simulation, a cache): a
# corrective shape key does not reach it.
SHAPE_REPLACING_MODIFIERS = {'CLOTH', 'SOFT_BODY', 'MESH_CACHE', 'MESH_SEQUENCE_CACHE'}


def check_writable(captures):
    """Refuses, before anything is written, results that could not reach what the user sees: an
    object of zero scale, a mesh linked from a library, one mesh shared by two of the objects (the second result would
    overwrite the first), or a shape that comes from a simulation or cache at this frame."""
    owners = {}
    for capture in captures:
        obj = capture.obj
        to_local(capture.world[:1], capture.matrix, obj.name)  # a zero scale is refused here
        if obj.library is not None or obj.data.library is not None:
            raise AddonError(f"'{obj.name}' is linked from a library and cannot be changed; "
                             f"make it local first; nothing was changed")
        other = owners.setdefault(obj.data.name_full, obj)
        if other is not obj:
            raise AddonError(f"'{other.name}' and '{obj.name}' share one mesh; make them "
                             f"single user (Object > Relations) first; nothing was changed")
        if capture.deformed:
            for modifier in obj.modifiers:
                if modifier.show_viewport and modifier.type in SHAPE_REPLACING_MODIFIERS:
                    raise AddonError(
                        f"'{obj.name}' gets its shape at this frame from its modifier "
                        f"'{modifier.name}', which a change of the mesh would not reach: fix it at "
                        f"the simulation's first frame, or use Bake Untangled Cache; nothing was "
                        f"changed")


def write_back(capture, world_positions):
    """Writes the result; returns 'mesh' or 'shape key' for the report."""
    untangled = to_local(world_positions, capture.matrix, capture.obj.name)
    mesh = capture.obj.data
    if not capture.deformed:
        mesh.vertices.foreach_set("co", untangled.ravel())
        mesh.update()
        return "mesh"
    obj = capture.obj
    if mesh.shape_keys is None:
        obj.shape_key_add(name="Basis", from_mix=False)
    key = mesh.shape_keys.key_blocks.get(SHAPE_KEY_NAME)
    created = key is None
    if created:
        key = obj.shape_key_add(name=SHAPE_KEY_NAME, from_mix=False)
    # What the key adds now (its value times its offset from its relative key) is part of the
    # captured shape: the new key keeps it and adds the correction, at value 1.
    current = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    key.relative_key.data.foreach_get("co", current)
    if not created and not key.mute and key.value != 0:
        shaped = np.empty_like(current)
        key.data.foreach_get("co", shaped)
        current = current + np.float32(key.value) * (shaped - current)
    # A corrective key: whatever deforms the mesh after it, the evaluated shape moves by the
    # correction the untangler found.
    corrected = current.reshape(-1, 3) + (untangled - capture.local)
    key.data.foreach_set("co", corrected.ravel())
    key.value = 1.0
    key.mute = False
    mesh.update()
    return "shape key"


def write_world_positions(obj, world_positions):
    local = to_local(world_positions, np.array(obj.matrix_world, dtype=np.float64))
    obj.data.vertices.foreach_set("co", local.ravel())
    obj.data.update()


def new_mesh(bpy_data, name, positions, face_sizes, face_indices):
    """A mesh datablock built from arrays with foreach_set (no per-vertex Python)."""
    mesh = bpy_data.meshes.new(name)
    sizes = np.asarray(face_sizes, dtype=np.int32)
    indices = np.asarray(face_indices, dtype=np.int32)
    mesh.vertices.add(len(positions))
    mesh.vertices.foreach_set("co", np.asarray(positions, dtype=np.float32).ravel())
    mesh.loops.add(len(indices))
    mesh.loops.foreach_set("vertex_index", indices)
    mesh.polygons.add(len(sizes))
    starts = np.zeros(len(sizes), dtype=np.int32)
    np.cumsum(sizes[:-1], out=starts[1:])
    mesh.polygons.foreach_set("loop_start", starts)
    mesh.polygons.foreach_set("loop_total", sizes)
    mesh.update(calc_edges=True)
    return mesh


def select_faces(mesh, faces):
    """Selects exactly the given polygons (and their vertices and edges), for Edit Mode."""
    polygon_mask = np.zeros(len(mesh.polygons), dtype=bool)
    polygon_mask[np.asarray(faces, dtype=np.int64)] = True
    sizes, indices = mesh_faces(mesh)
    vertex_mask = np.zeros(len(mesh.vertices), dtype=bool)
    vertex_mask[indices[np.repeat(polygon_mask, sizes)]] = True
    edges = np.empty(len(mesh.edges) * 2, dtype=np.int32)
    mesh.edges.foreach_get("vertices", edges)
    edge_mask = vertex_mask[edges.reshape(-1, 2)].all(axis=1)
    mesh.polygons.foreach_set("select", polygon_mask)
    mesh.vertices.foreach_set("select", vertex_mask)
    mesh.edges.foreach_set("select", edge_mask)
    mesh.update()
    return int(polygon_mask.sum())
