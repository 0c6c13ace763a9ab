"""Writes the seed corpus of fuzz_capi (tests/fuzz/corpus): a few inputs in the byte format
fuzz_capi.cpp reads, so the fuzzer starts from valid grids, crossings and broken meshes."""

import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))


def grid_piece(w, h, spacing_code, z_bytes, triangles):
    # w, h, spacing, then per vertex (dx, dy, z), then the triangles flag, then spoil bytes.
    out = [w - 2, h - 2, spacing_code]
    for k in range(w * h):
        out += [0, 0, z_bytes[k % len(z_bytes)] & 0xFF]
    return out + [1 if triangles else 0, 0, 0]


def seed(flags, method, pieces, tail):
    body = [flags, method, 1, 0, 0, 0]  # flags, method, threads, thickness, strength, iterations
    for piece in pieces:
        body += piece
    return bytes(body + tail)


def main():
    corpus = os.path.join(HERE, "corpus")
    os.makedirs(corpus, exist_ok=True)
    rng = random.Random(7)
    seeds = {
        "flat_grid": seed(0x60, 0, [grid_piece(6, 6, 2, [0], False)], [1, 0] * 20),
        "bumpy_grid_untangle": seed(0x60, 0, [grid_piece(7, 7, 3, [0, 40, -40, 90], False)], [2] * 40),
        "two_sheets_crossing": seed(
            0x61, 0, [grid_piece(5, 5, 4, [0], False), grid_piece(5, 5, 4, [-60, 60], True)], [3] * 40),
        "kikuchi_two_sheets": seed(
            0x61, 1, [grid_piece(4, 6, 2, [10, -10], True), grid_piece(6, 4, 2, [-20, 20], False)], [0] * 40),
        # Free topology: 8 vertices, a quad (size byte 1 -> 4 corners) and a triangle (0 -> 3).
        "free_mesh": bytes([0x62, 2, 1, 0, 0, 0, 8] + [rng.randrange(256) for _ in range(24)]
                           + [2, 1, 0, 1, 2, 3, 0, 4, 5, 6, 0, 0]),
        "colliders_ground": seed(0x78, 0, [grid_piece(5, 5, 2, [0], False)], [0, 0, 0, 20, 10] * 8),
    }
    for name, data in seeds.items():
        with open(os.path.join(corpus, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
