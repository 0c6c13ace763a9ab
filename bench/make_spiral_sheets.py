#!/usr/bin/env python3
"""Sheets that pass through themselves from border to border: a profile curve that crosses
itself, extruded (with a slight twist) into a strip of quads.

    python3 bench/make_spiral_sheets.py OUTDIR [--triangulate]

Writes OUTDIR/spiral_NAME.obj (quads; with --triangulate also OUTDIR/spiral_NAME_tri.obj, each
quad split along alternating diagonals). The profile is resampled to equal arc-length steps
and the height cut to the same step, so the quads are near squares. Each crossing of the
profile becomes an intersection line of the sheet with itself that runs from its lower border
to its upper one; no ordering of the layers is a valid one, so the untangler must move a part
of the sheet across another.

  eight   a figure-eight (lemniscate of Gerono), closed: a tube whose wall passes through
          itself along one line (one crossing, two walls through each other)
  loops   an open prolate trochoid with three loops: three crossings, each a loop whose
          ends pass through each other
  roll    an open spiral of 1.5 turns that rolls inward and then leaves straight outward
          through its own windings: two crossings of one flat part through two layers
          (the "Extreme" spiral sheets of Untangling26 are of this kind)

Positions come from closed-form curves sampled at offsets (not at the crossings), so no
vertex or edge lies exactly on the other layer. numpy only.
"""

import os
import sys

import numpy as np

STEP = 0.02      # edge length along the profile and the height
HEIGHT = 0.8
TWIST = 0.35     # radians of profile rotation from the lower border to the upper one


def eight(t):
    t = 2 * np.pi * t
    return np.stack([0.6 * np.sin(t), 0.6 * np.sin(t) * np.cos(t)], axis=1)


def loops(t):
    t = np.pi + t * 6 * np.pi
    return np.stack([0.09 * (t - 4 * np.pi) - 0.35 * np.sin(t), -0.35 * np.cos(t)], axis=1)


def roll(t):
    # 0 <= t < 0.75: spiral in, theta 0 .. 3 pi, radius 0.6 .. 0.25; then a straight exit.
    out = np.zeros((len(t), 2))
    s = t / 0.75
    inner = t < 0.75
    theta = 3 * np.pi * s[inner]
    radius = 0.6 - 0.35 * s[inner]
    out[inner] = np.stack([radius * np.cos(theta), radius * np.sin(theta)], axis=1)
    end = np.array([-0.25, 0.0])
    # Leave through the centre, across both windings, away from the spiral's own start.
    direction = np.array([np.cos(0.5), np.sin(0.5)])
    u = (t[~inner] - 0.75) / 0.25
    out[~inner] = end + np.outer(u * 1.1, direction)
    return out


PROFILES = {"eight": (eight, True), "loops": (loops, False), "roll": (roll, False)}


def resample(curve, closed):
    """Points at equal arc-length steps of about STEP, the first half a step in (closed) so no
    sample falls on a symmetric crossing."""
    t = np.linspace(0.0, 1.0, 20001)
    p = curve(t)
    if closed:
        p = np.vstack([p[:-1], p[:1]])
    seg = np.linalg.norm(np.diff(p, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    length = s[-1]
    if closed:
        n = int(round(length / STEP))
        targets = (np.arange(n) + 0.37) * length / n
    else:
        n = int(round(length / STEP)) + 1
        targets = np.linspace(0.0, length, n)
    return np.stack([np.interp(targets, s, p[:, k]) for k in range(2)], axis=1)


def sheet(name):
    curve, closed = PROFILES[name]
    profile = resample(curve, closed)
    rows = int(round(HEIGHT / STEP)) + 1
    vertices = []
    for j in range(rows):
        h = j / (rows - 1)
        angle = TWIST * (h - 0.5)
        c, s = np.cos(angle), np.sin(angle)
        for x, y in profile:
            vertices.append((c * x - s * y, s * x + c * y, HEIGHT * h))
    columns = len(profile)
    segments = columns if closed else columns - 1
    faces = [(j * columns + i, j * columns + (i + 1) % columns,
              (j + 1) * columns + (i + 1) % columns, (j + 1) * columns + i)
             for j in range(rows - 1) for i in range(segments)]
    return vertices, faces, segments


def triangulated(faces, columns):
    out = []
    for k, (a, b, c, d) in enumerate(faces):
        i, j = k % columns, k // columns
        out += [(a, b, c), (a, c, d)] if (i + j) % 2 == 0 else [(a, b, d), (b, c, d)]
    return out


def write_obj(path, vertices, faces, name):
    with open(path, "w") as f:
        f.write("# made by bench/make_spiral_sheets.py\n")
        for x, y, z in vertices:
            f.write(f"v {x:.7f} {y:.7f} {z:.7f}\n")
        f.write(f"o {name}\n")
        for face in faces:
            f.write("f " + " ".join(str(i + 1) for i in face) + "\n")


def main(args):
    if not args or args[0].startswith("-"):
        print(__doc__)
        sys.exit(1)
    out_dir, tri = args[0], "--triangulate" in args[1:]
    os.makedirs(out_dir, exist_ok=True)
    for name in PROFILES:
        vertices, faces, columns = sheet(name)
        write_obj(os.path.join(out_dir, f"spiral_{name}.obj"), vertices, faces, name)
        print(f"spiral_{name:<10} {len(vertices):>6} vertices {len(faces):>6} quads")
        if tri:
            write_obj(os.path.join(out_dir, f"spiral_{name}_tri.obj"), vertices,
                      triangulated(faces, columns), name)


if __name__ == "__main__":
    main(sys.argv[1:])
