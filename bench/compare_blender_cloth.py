"""Blender's own cloth solver against our dropped-cloth scene, in one run.

    blender -b --factory-startup --python bench/compare_blender_cloth.py -- [--frames N] [--threads T]

Blender side (timed in this process): a 40 x 40 grid of the dropped-cloth size (spacing 0.145,
5.7 m wide, 2.6 m above the ground) falls on a sphere of radius 0.9 resting on a ground plane,
with the cloth modifier at quality 10 and self-collision on (collision distances 0.02, the
scene's layer gap). Its cache is cleared first; every frame is evaluated with frame_set. The
spin of our scene has no counterpart in the modifier (no initial velocity), which changes the
folds, not the cost per frame much.

Our side: ``untangle run dropped-cloth --json --frames N`` as a subprocess; its own
``seconds_per_frame`` (the full pipeline: detection, ICM, XPBD with proximity). The CLI is found
through the environment variable UNTANGLE_CLI, else build/release/cli/untangle.

Printed: seconds per frame of each and the ratio (target: ours at least 20x faster).
"""

import json
import os
import subprocess
import sys
import time

import bpy

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from blender_script import find_cli, script_arguments  # noqa: E402

SIDE = 40
SPACING = 0.145
HEIGHT = 2.6
SPHERE_RADIUS = 0.9
LAYER_GAP = 0.02


def option(args, name, default):
    if name in args:
        return int(args[args.index(name) + 1])
    return default


def grid_object():
    centre = 0.5 * (SIDE - 1)
    vertices = [((c - centre) * SPACING, (r - centre) * SPACING, HEIGHT)
                for r in range(SIDE) for c in range(SIDE)]
    faces = [(r * SIDE + c, r * SIDE + c + 1, (r + 1) * SIDE + c + 1, (r + 1) * SIDE + c)
             for r in range(SIDE - 1) for c in range(SIDE - 1)]
    mesh = bpy.data.meshes.new("dropped_cloth")
    mesh.from_pydata(vertices, [], faces)
    mesh.update()
    cloth = bpy.data.objects.new("dropped_cloth", mesh)
    bpy.context.scene.collection.objects.link(cloth)
    return cloth


def add_collider(obj):
    obj.modifiers.new("Collision", 'COLLISION')
    obj.collision.thickness_outer = LAYER_GAP


def blender_seconds_per_frame(frames):
    scene = bpy.context.scene
    for obj in list(scene.objects):
        bpy.data.objects.remove(obj, do_unlink=True)
    bpy.ops.mesh.primitive_uv_sphere_add(radius=SPHERE_RADIUS, location=(0, 0, SPHERE_RADIUS),
                                         segments=48, ring_count=24)
    add_collider(bpy.context.active_object)
    bpy.ops.mesh.primitive_plane_add(size=20, location=(0, 0, 0))
    add_collider(bpy.context.active_object)
    cloth = grid_object()
    modifier = cloth.modifiers.new("Cloth", 'CLOTH')
    modifier.settings.quality = 10
    modifier.collision_settings.use_collision = True
    modifier.collision_settings.distance_min = LAYER_GAP
    modifier.collision_settings.use_self_collision = True
    modifier.collision_settings.self_distance_min = LAYER_GAP
    modifier.point_cache.frame_start = 1
    modifier.point_cache.frame_end = frames + 1
    scene.frame_start = 1
    scene.frame_end = frames + 1
    scene.frame_set(1)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    start = time.perf_counter()
    for frame in range(2, frames + 2):
        scene.frame_set(frame)
        cloth.evaluated_get(depsgraph).data  # make sure the frame is evaluated
    seconds = time.perf_counter() - start
    evaluated = cloth.evaluated_get(depsgraph).data
    lowest = min(v.co.z for v in evaluated.vertices)
    return seconds / frames, lowest


def our_seconds_per_frame(frames, threads):
    command = [find_cli(), "run", "dropped-cloth", "--json", "--frames", str(frames)]
    if threads:
        command += ["--threads", str(threads)]
    result = subprocess.run(command, capture_output=True, text=True, check=True)
    summary = json.loads(result.stdout)
    return summary["seconds_per_frame"], summary["mean_pairs_last_half"]


def main():
    args = script_arguments()
    frames = option(args, "--frames", 100)
    threads = option(args, "--threads", 0)
    blender, lowest = blender_seconds_per_frame(frames)
    ours, pairs = our_seconds_per_frame(frames, threads)
    print(f"dropped cloth 40 x 40, {frames} frames")
    print(f"  Blender cloth (quality 10, self-collision): {blender:.4f} s/frame "
          f"(lowest vertex at z = {lowest:.3f})")
    print(f"  untangle run dropped-cloth:                 {ours:.4f} s/frame "
          f"(mean pairs over the second half {pairs:.2f})")
    print(f"  ratio Blender / ours: {blender / ours:.1f}x (target >= 20x)")


main()
