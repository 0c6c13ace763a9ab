"""Round trip of positions through ctypes + numpy for a 10,000-vertex cloth: set_positions ->
step -> positions(), as the add-on's Run Scene does every tick. Prints the time of each part
and the share of the frame spent moving positions across the ABI (target <= 10 %).

    CLOTH_UNTANGLE_LIB=build/release/capi/libuntangle.so /usr/bin/python3 bench/bench_python_roundtrip.py [frames]
"""

import importlib
import os
import statistics
import sys
import time
import types

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def load_native():
    """The add-on's native.py without the package's __init__ (it imports bpy): a bare package
    object stands in for it, so the bindings' relative imports work."""
    package = types.ModuleType("cloth_untangle")
    package.__path__ = [os.path.normpath(os.path.join(HERE, "..", "blender_addon", "cloth_untangle"))]
    sys.modules["cloth_untangle"] = package
    return importlib.import_module("cloth_untangle.native")


def sheet(native, n=100, spacing=0.05):
    """An n x n quad grid (n * n vertices) in z = 1, pinned along one edge, so it swings down."""
    j, i = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    positions = np.stack([i * spacing, j * spacing, np.ones_like(i, dtype=float)], axis=-1)
    positions = positions.reshape(-1, 3).astype(np.float32)
    c = (j[:-1, :-1] * n + i[:-1, :-1]).ravel()
    indices = np.stack([c, c + 1, c + n + 1, c + n], axis=1).ravel().astype(np.uint32)
    sizes = np.full((n - 1) * (n - 1), 4, dtype=np.uint32)
    inverse_mass = np.ones(n * n, dtype=np.float32)
    inverse_mass[:n] = 0
    return native.Piece(positions, sizes, indices, inverse_mass)


def main():
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    native = load_native()
    piece = sheet(native)
    with native.World([piece]) as world:
        world.step(3)  # warm up: first-touch allocations, OpenMP thread start
        x = world.positions()
        set_s, step_s, get_s = [], [], []
        for _ in range(frames):
            t0 = time.perf_counter()
            world.set_positions(x)
            t1 = time.perf_counter()
            world.step(1)
            t2 = time.perf_counter()
            x = world.positions()
            t3 = time.perf_counter()
            set_s.append(t1 - t0)
            step_s.append(t2 - t1)
            get_s.append(t3 - t2)
        engine_ms = statistics.median(world.stats()["ms"]["total"] for _ in range(1))
    set_ms = 1e3 * statistics.median(set_s)
    step_ms = 1e3 * statistics.median(step_s)
    get_ms = 1e3 * statistics.median(get_s)
    frame_ms = set_ms + step_ms + get_ms
    print(f"vertices: {len(piece.positions)}, frames timed: {frames}, threads: {native.get_threads()}")
    print(f"set_positions: {set_ms:8.3f} ms (median)")
    print(f"step(1):       {step_ms:8.3f} ms (median; engine's own total of the last frame {engine_ms:.3f} ms)")
    print(f"positions():   {get_ms:8.3f} ms (median)")
    print(f"round trip (set + get): {set_ms + get_ms:.3f} ms = {100 * (set_ms + get_ms) / frame_ms:.2f} % "
          f"of the frame ({frame_ms:.3f} ms); target <= 10 %")


if __name__ == "__main__":
    main()
