"""What the bench scripts run by Blender (`blender -b --python bench/X.py -- ARGS`) share."""

import os
import struct
import sys


def script_arguments():
    """The arguments after Blender's `--`."""
    argv = sys.argv
    return argv[argv.index("--") + 1:] if "--" in argv else []


def find_cli():
    """The untangle CLI: $UNTANGLE_CLI, else build/release/cli/untangle of this repository."""
    path = os.environ.get("UNTANGLE_CLI")
    if path:
        return path
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, "build", "release", "cli", "untangle")


def read_obj(path):
    """Vertices and polygons (corner index tuples, 0-based) of an OBJ: v and f statements only."""
    vertices, faces = [], []
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            if parts[0] == "v":
                vertices.append((float(parts[1]), float(parts[2]), float(parts[3])))
            elif parts[0] == "f":
                corners = []
                for token in parts[1:]:
                    index = int(token.split("/")[0])
                    corners.append(index - 1 if index > 0 else len(vertices) + index)
                faces.append(tuple(corners))
    return vertices, faces


def fan_triangles(faces):
    """Each polygon split as a fan from its first corner, as the library splits it."""
    return [(face[0], face[i], face[i + 1]) for face in faces for i in range(1, len(face) - 1)]


def read_pc2(path):
    """The frames of a PC2 point cache, each a list of (x, y, z); a cache cut short (an
    interrupted bake) gives the frames it holds."""
    with open(path, "rb") as f:
        data = f.read()
    signature, _, points, _, _, samples = struct.unpack_from("<12siiffi", data, 0)
    if signature != b"POINTCACHE2\0":
        raise ValueError(f"{path}: not a PC2 file")
    samples = min(samples, (len(data) - 32) // (12 * points)) if points else 0
    values = struct.unpack_from(f"<{3 * points * samples}f", data, 32)
    return [[values[3 * i:3 * i + 3] for i in range(s * points, (s + 1) * points)]
            for s in range(samples)]
