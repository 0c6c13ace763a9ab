"""The add-on's own overhead in Untangle Selected on a 20,000-vertex mesh.

Run: blender -b --factory-startup --python bench/bench_addon_overhead.py -- --zip ZIP
     [--rows 142] [--repeats 3] [--max-iterations 40]
Splits the operator's wall time into the library's untangle time (its report), the rest of
the native.untangle call (building the library mesh, ctypes, numpy conversion) and the add-on's
Python (depsgraph read, foreach_get/set, world-space transforms, write-back, reports).
Target: add-on + bindings <= 10 % of the operator's time.
"""

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time

import bpy
import numpy as np


def arguments():
    argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    parser = argparse.ArgumentParser()
    parser.add_argument("--zip", required=True)
    parser.add_argument("--rows", type=int, default=142, help="grid rows (rows^2 vertices)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-iterations", type=int, default=40)
    return parser.parse_args(argv)


def install(zip_path):
    folder = tempfile.mkdtemp(prefix="cloth_untangle_bench_")
    atexit.register(shutil.rmtree, folder, True)
    os.environ["BLENDER_USER_SCRIPTS"] = folder
    bpy.ops.preferences.addon_install(filepath=zip_path)
    bpy.ops.preferences.addon_enable(module="cloth_untangle")


def folded_sheet(rows):
    """A sheet folded onto itself, its back half dented through the front in two places."""
    spacing = 1.0 / rows
    i, j = np.meshgrid(np.arange(rows), np.arange(rows), indexing="xy")
    x = i * spacing
    half = rows // 2
    back = j >= half
    y = np.where(back, (rows - 1 - j) * spacing + 0.5 * spacing, j * spacing)
    dents = sum(np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / 0.004) for cx, cy in
                ((0.3, 0.25), (0.7, 0.3)))
    z = np.where(back, 0.02 - 0.05 * dents, 0.0)
    positions = np.stack([x, y, z], axis=-1).reshape(-1, 3).astype(np.float32)
    a = (np.arange(rows - 1)[None, :] + rows * np.arange(rows - 1)[:, None]).ravel()
    quads = np.stack([a, a + 1, a + rows + 1, a + rows], axis=1).astype(np.int32)
    from cloth_untangle import meshdata
    mesh = meshdata.new_mesh(bpy.data, "Folded", positions, np.full(len(quads), 4), quads.ravel())
    obj = bpy.data.objects.new("Folded", mesh)
    bpy.context.collection.objects.link(obj)
    return obj, positions


def main():
    args = arguments()
    install(args.zip)
    from cloth_untangle import meshdata, native, properties
    for obj in list(bpy.data.objects):
        bpy.data.objects.remove(obj)
    obj, original = folded_sheet(args.rows)
    obj.select_set(True)
    bpy.context.view_layer.objects.active = obj
    props = bpy.context.scene.cloth_untangle
    props.max_iterations = args.max_iterations
    settings = properties.settings_for(props)
    totals, library, binding = [], [], []
    for _ in range(args.repeats):
        obj.data.vertices.foreach_set("co", original.ravel())
        obj.data.update()
        start = time.perf_counter()
        bpy.ops.cloth_untangle.untangle_selected()
        totals.append(time.perf_counter() - start)
        library.append(props.stat_ms / 1000.0)
        # The same call outside the operator: what native.untangle costs beyond the report.
        obj.data.vertices.foreach_set("co", original.ravel())
        obj.data.update()
        capture = meshdata.Capture(obj, bpy.context.evaluated_depsgraph_get())
        start = time.perf_counter()
        _, report = native.untangle([capture.piece()], settings, max_iterations=args.max_iterations)
        binding.append(time.perf_counter() - start - report["seconds"])
    total = statistics.median(totals)
    inside = statistics.median(library)
    bindings = statistics.median(binding)
    addon = total - inside - bindings
    print(f"mesh: {len(original)} vertices, {args.max_iterations} iterations at most, "
          f"threads {native.get_threads()}, status: {props.status}")
    print(f"operator total       {1000 * total:9.1f} ms")
    print(f"library (untangle)   {1000 * inside:9.1f} ms")
    print(f"bindings (mesh build, ctypes) {1000 * bindings:9.1f} ms  ({100 * bindings / total:.1f} %)")
    print(f"add-on Python        {1000 * addon:9.1f} ms  ({100 * addon / total:.1f} %)")
    print(f"overhead outside the untangle: {100 * (total - inside) / total:.1f} % "
          f"(target <= 10 %)")


main()
