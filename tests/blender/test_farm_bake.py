"""The farm entry point (cloth_untangle/farm.py) as a render farm worker runs it: a separate
headless Blender on a saved .blend holding a cloth baked by Blender's own solver (self-collision
off, tangled). `bake` writes a PC2 whose every frame Blender's BVHTree.overlap finds free of
pairs (the input had some) and does not save the .blend; `attach` saves a copy whose cache
modifier plays the PC2; a missing object, an empty frame range and a missing cache each exit
non-zero with one error line naming the problem."""

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import addon_harness as h  # noqa: E402
import bpy  # noqa: E402

package, scripts = h.install()
FARM = os.path.join(os.path.dirname(package.__file__), "farm.py")
FIRST, LAST = 20, 24


def saved_shot():
    """A saved .blend with the tangled cloth 'Sheet' (simulation baked) and its collider."""
    h.empty_scene()
    cloth, _sphere = h.tangled_cloth(frames=1, name="Sheet")
    scene = bpy.context.scene
    scene.frame_start, scene.frame_end = 1, LAST
    cache = cloth.modifiers["Cloth"].point_cache
    cache.frame_end = LAST
    with bpy.context.temp_override(point_cache=cache, object=cloth, active_object=cloth):
        bpy.ops.ptcache.bake(bake=True)
    pairs_in = []
    for frame in range(FIRST, LAST + 1):
        scene.frame_set(frame)
        pairs_in.append(len(h.object_pairs(cloth)))
    h.expect(max(pairs_in) > 0, f"the Blender cloth is not tangled: {pairs_in}")
    marker = bpy.data.objects.new("Marker", None)
    scene.collection.objects.link(marker)
    folder = h.temporary_folder("cloth_untangle_farm_")
    path = os.path.join(folder, "shot.blend")
    bpy.ops.wm.save_as_mainfile(filepath=path)
    return path, folder, [tuple(p.vertices) for p in cloth.data.polygons]


def worker(blend, *farm_args):
    """blender -b FILE --python farm.py -- ARGS, as the Flamenco job's commands run it."""
    environment = dict(os.environ, BLENDER_USER_SCRIPTS=scripts)
    return subprocess.run([bpy.app.binary_path, "-b", "--factory-startup", blend,
                           "--python", FARM, "--", *farm_args],
                          env=environment, capture_output=True, text=True, timeout=600)


SHOT, FOLDER, FACES = saved_shot()


def test_bake_writes_an_untangled_cache_and_leaves_the_file():
    before = os.path.getmtime(SHOT)
    run = worker(SHOT, "bake", "--objects", "Sheet", "--frames", f"{FIRST}-{LAST}", "--folder", "//cache")
    h.expect(run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}")
    path = os.path.join(FOLDER, "cache", "Sheet_untangled.pc2")
    h.expect(f"wrote {path}" in run.stdout, run.stdout)
    header, data = h.read_pc2(path)
    count = LAST - FIRST + 1
    h.expect(header["frames"] == count and header["start"] == float(FIRST), header)
    # PC2 frames are in object space: the object's rigid placement does not change crossings.
    frames = data.reshape(count, header["vertices"], 3).astype(float)
    pairs = [len(h.overlap_pairs(local, FACES)) for local in frames]
    h.expect(pairs == [0] * count, f"pairs per baked frame: {pairs}")
    h.expect(os.path.getmtime(SHOT) == before, "a bake must not save the .blend")


def test_attach_saves_a_copy_that_plays_the_cache():
    output = os.path.join(FOLDER, "shot_untangled.blend")
    run = worker(SHOT, "attach", "--objects", "Sheet", "--folder", "//cache", "--output", output)
    h.expect(run.returncode == 0, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}")
    h.expect(os.path.isfile(output), "no output file")
    with bpy.data.libraries.load(output) as (source, target):
        target.objects = ["Sheet"]
    sheet = target.objects[0]
    last = sheet.modifiers[-1]
    h.expect(last.type == 'MESH_CACHE' and last.cache_format == 'PC2', last.type)
    h.expect(last.frame_start == FIRST, f"frame_start {last.frame_start}")
    h.expect(last.filepath == "//cache/Sheet_untangled.pc2", last.filepath)
    h.expect(not sheet.modifiers["Cloth"].show_render, "the simulation must be disabled")


def expect_failure(run, *fragments):
    h.expect(run.returncode == 1, f"exit {run.returncode}\n{run.stdout}\n{run.stderr}")
    lines = [line for line in run.stderr.splitlines() if line.startswith("cloth_untangle farm: error:")]
    h.expect(len(lines) == 1, f"expected one error line:\n{run.stderr}")
    for fragment in fragments:
        h.expect(fragment in lines[0], f"{lines[0]!r} does not mention {fragment!r}")


def test_failures_exit_non_zero_with_a_message():
    expect_failure(worker(SHOT, "bake", "--objects", "Sheet,Shirt", "--folder", "//cache"),
                   "'Shirt'", "Sheet")
    expect_failure(worker(SHOT, "bake", "--objects", "Marker"), "'Marker' is not a mesh")
    expect_failure(worker(SHOT, "attach", "--objects", "Sheet", "--folder", "//elsewhere",
                          "--output", os.path.join(FOLDER, "x.blend")),
                   "Sheet_untangled.pc2", "missing")
    bad_frames = worker(SHOT, "bake", "--objects", "Sheet", "--frames", "24-20")
    h.expect(bad_frames.returncode == 2 and "empty" in bad_frames.stderr, bad_frames.stderr)


h.run([test_bake_writes_an_untangled_cache_and_leaves_the_file,
       test_attach_saves_a_copy_that_plays_the_cache,
       test_failures_exit_non_zero_with_a_message])
