"""Bake Untangled Cache on a mesh animated by Blender's own cloth solver (self-collision off):
one PC2 per object with the right header and frame count, a Mesh Cache modifier at the end of
the stack playing it (the cloth left in place, disabled), the evaluated positions at every
frame equal to the baked frame, and Blender's BVHTree.overlap finding no pair on any frame
although the input had some. A re-bake replaces the cache; a cancelled bake leaves a valid
partial PC2."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import addon_harness as h  # noqa: E402
import bpy  # noqa: E402
import numpy as np  # noqa: E402

package, scripts = h.install()
FIRST, LAST = 20, 24


def baked_cloth():
    h.empty_scene()
    cloth, _sphere = h.tangled_cloth(frames=1, name="Sheet")
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = FIRST, LAST
    cache = cloth.modifiers["Cloth"].point_cache
    cache.frame_end = LAST
    # Bake the simulation so any frame can be visited in any order.
    with bpy.context.temp_override(point_cache=cache, object=cloth, active_object=cloth):
        bpy.ops.ptcache.bake(bake=True)
    return cloth


def evaluated_local(obj):
    evaluated = obj.evaluated_get(bpy.context.evaluated_depsgraph_get())
    mesh = evaluated.to_mesh()
    co = np.empty(len(mesh.vertices) * 3, dtype=np.float32)
    mesh.vertices.foreach_get("co", co)
    evaluated.to_mesh_clear()
    return co.reshape(-1, 3)


def test_bake_plays_back_untangled_frames():
    cloth = baked_cloth()
    scene = bpy.context.scene
    pairs_in = []
    for frame in range(FIRST, LAST + 1):
        scene.frame_set(frame)
        pairs_in.append(len(h.object_pairs(cloth)))
    h.expect(max(pairs_in) > 0, f"the Blender cloth is not tangled: {pairs_in}")
    folder = h.temporary_folder("cloth_untangle_bake_")
    h.select_only([cloth])
    h.expect(bpy.ops.cloth_untangle.bake_cache(directory=folder) == {'FINISHED'}, "bake failed")

    path = os.path.join(folder, "Sheet_untangled.pc2")
    header, data = h.read_pc2(path)
    count = LAST - FIRST + 1
    vertices = len(cloth.data.vertices)
    h.expect(header == {"signature": b"POINTCACHE2\0", "version": 1, "vertices": vertices,
                        "start": float(FIRST), "sampling": 1.0, "frames": count}, header)
    h.expect(data.size == count * vertices * 3, f"payload of {data.size} floats")
    baked = data.reshape(count, vertices, 3)

    last = cloth.modifiers[-1]
    h.expect(last.type == 'MESH_CACHE' and last.cache_format == 'PC2', last.type)
    h.expect(last.frame_start == FIRST, f"frame_start {last.frame_start}")
    h.expect(bpy.path.abspath(last.filepath) == path, last.filepath)
    simulation = cloth.modifiers["Cloth"]
    h.expect(not simulation.show_viewport and not simulation.show_render,
             "the cloth modifier must stay, disabled")

    pairs_out = []
    for k, frame in enumerate(range(FIRST, LAST + 1)):
        scene.frame_set(frame)
        h.expect(np.allclose(evaluated_local(cloth), baked[k], atol=1e-6),
                 f"frame {frame} does not play baked frame {k}")
        pairs_out.append(len(h.object_pairs(cloth)))
    h.expect(pairs_out == [0] * count, f"pairs per frame after the bake: {pairs_out}")
    status = scene.cloth_untangle.status
    h.expect(status.startswith(f"Baked {count} frames of 1 object:"), status)

    # Baking again reads the simulation (not the old cache) and replaces the cache.
    h.expect(bpy.ops.cloth_untangle.bake_cache(directory=folder) == {'FINISHED'}, "re-bake")
    caches = [m for m in cloth.modifiers if m.type == 'MESH_CACHE']
    h.expect(len(caches) == 1 and cloth.modifiers[-1] == caches[0], "one cache, at the end")
    _, again = h.read_pc2(path)
    h.expect(np.allclose(again.reshape(count, vertices, 3), baked, atol=1e-6),
             "a re-bake must untangle the same input again")


class _CancelAfter:
    """Stands in for the job's cancel event (what Esc sets) and fires after n checks."""

    def __init__(self, checks):
        self.checks = checks

    def is_set(self):
        self.checks -= 1
        return self.checks < 0

    def set(self):
        self.checks = 0


def test_cancelled_bake_leaves_a_valid_partial_cache():
    from cloth_untangle import operators, properties
    cloth = baked_cloth()
    folder = h.temporary_folder("cloth_untangle_cancel_")
    h.select_only([cloth])
    context = bpy.context
    job = operators.BakeJob(context, [cloth], folder)
    job.read_all(context)
    job.cancel = _CancelAfter(2)
    props = context.scene.cloth_untangle
    job.solve(properties.settings_for(props), False, 300, props.strain_limit, props.keep_seams_apart)
    h.expect(job.error is None, repr(job.error))
    done = len(job.result)
    h.expect(0 < done < LAST - FIRST + 1, f"{done} frames finished before the cancel")
    job.write()
    header, data = h.read_pc2(os.path.join(folder, "Sheet_untangled.pc2"))
    h.expect(header["frames"] == done and data.size == done * header["vertices"] * 3,
             f"partial cache header {header} and {data.size} floats")


def test_objects_whose_names_clean_alike_get_their_own_caches():
    from cloth_untangle import operators
    h.empty_scene()
    objects = []
    for name in ("Cloth.001", "Cloth_001", "cloth_001"):
        bpy.ops.mesh.primitive_plane_add()
        bpy.context.active_object.name = name
        objects.append(bpy.context.active_object)
    folder = h.temporary_folder("cloth_untangle_names_")
    paths = operators.cache_paths(folder, objects, "_untangled")
    names = [os.path.basename(path).lower() for path in paths]
    h.expect(len(set(names)) == 3, f"shared cache files: {paths}")
    h.expect(all(os.path.dirname(path) == folder for path in paths), paths)


def test_a_failed_write_keeps_the_previous_caches():
    from cloth_untangle import pc2
    folder = h.temporary_folder("cloth_untangle_write_")
    kept = os.path.join(folder, "A_untangled.pc2")
    old = np.zeros((2, 4, 3), dtype=np.float32)
    pc2.write(kept, old)
    blocked = os.path.join(folder, "B_untangled.pc2")
    os.makedirs(blocked + ".part")  # B's file cannot be written
    new = np.ones((3, 4, 3), dtype=np.float32)
    try:
        pc2.write_all([(kept, new), (blocked, new)])
    except OSError:
        pass
    else:
        raise AssertionError("writing into a folder must fail")
    header, data = h.read_pc2(kept)
    h.expect(header["frames"] == 2 and np.array_equal(data.reshape(old.shape), old),
             "the previous cache was replaced by a failed write")
    h.expect(not os.path.exists(kept + ".part"), "a .part file was left behind")


h.run([test_bake_plays_back_untangled_frames, test_cancelled_bake_leaves_a_valid_partial_cache,
       test_objects_whose_names_clean_alike_get_their_own_caches,
       test_a_failed_write_keeps_the_previous_caches])
