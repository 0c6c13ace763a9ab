"""Headless bakes for a render farm worker (the Flamenco job type farm/flamenco/ runs these).

    blender -b shot.blend --python <add-on folder>/farm.py -- bake --objects "Shirt,Skirt"
            [--frames 1-250] [--folder //cache]
    blender -b shot.blend --python <add-on folder>/farm.py -- attach --objects "Shirt,Skirt"
            [--objects "Cape"] [--folder //cache] --output shot_untangled.blend

`bake` untangles the named objects of the saved file together over the frame range (as Bake
Untangled Cache does with them selected) and writes one PC2 per object; the .blend is not
saved, so bakes of other objects can run on other workers at the same time. `attach` adds the
Mesh Cache modifiers playing those PC2 files (each --objects is one bake's group, so the file
names are the ones that bake wrote) and saves the result as --output.

On success the exit code is 0; on any failure one line "cloth_untangle farm: error: ..." goes to
stderr and the exit code is 1 (2 for bad arguments). Objects the bake leaves tangled are a
warning, not a failure.

The add-on is found wherever this file lies: enabled as the installed add-on or extension whose
folder this is (Blender 3.x add-on or 4.2+ extension), or imported from this folder when it is
not installed (an unpacked zip on shared storage). The argument parser imports no bpy, so the
farm job type's test checks its commands against it.
"""

import argparse
import importlib
import os
import sys

PREFIX = "cloth_untangle farm"


class FarmError(Exception):
    """A failure reported as one line, without a traceback."""


def frame_range(text):
    start, separator, end = text.partition("-")
    try:
        first, last = int(start), int(end if separator else start)
    except ValueError:
        raise argparse.ArgumentTypeError(f"frames must be FIRST-LAST, got {text!r}") from None
    if last < first:
        raise argparse.ArgumentTypeError(f"the frame range {text!r} is empty")
    return first, last


def object_names(text):
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError("no object name given")
    return names


def parser():
    root = argparse.ArgumentParser(prog="blender -b FILE.blend --python farm.py --",
                                   description="Bake untangled caches headless.")
    commands = root.add_subparsers(dest="command", required=True)
    bake = commands.add_parser("bake", help="bake the named objects together")
    bake.add_argument("--objects", type=object_names, required=True,
                      help="comma-separated object names, untangled together")
    bake.add_argument("--frames", type=frame_range,
                      help="FIRST-LAST (default: the scene's frame range)")
    bake.add_argument("--folder", default="",
                      help="cache folder (// = beside the .blend; default: the scene's setting)")
    attach = commands.add_parser("attach", help="play baked caches and save the file")
    attach.add_argument("--objects", type=object_names, action="append", required=True,
                        help="one bake's objects; repeat for each bake")
    attach.add_argument("--folder", default="", help="the folder the bakes wrote to")
    attach.add_argument("--output", required=True, help="the .blend file to save")
    return root


def parse(argv):
    """The arguments after Blender's '--' (argv without them: sys.argv)."""
    if argv is None:
        argv = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
    return parser().parse_args(argv)


# --- Everything below runs inside Blender -------------------------------------------------


def _package():
    """The add-on package this file belongs to, registered."""
    import addon_utils

    here = os.path.dirname(os.path.abspath(__file__))
    for module in addon_utils.modules():
        if os.path.dirname(os.path.abspath(module.__file__)) == here:
            name = module.__name__
            if addon_utils.enable(name, default_set=False) is None and name not in sys.modules:
                raise FarmError(f"could not enable the add-on {name} (see the messages above)")
            return sys.modules[name]
    parent, name = os.path.split(here)
    if parent not in sys.path:
        sys.path.insert(0, parent)
    package = importlib.import_module(name)
    package.register()
    return package


def _objects(bpy, names):
    missing = [name for name in names if name not in bpy.data.objects]
    if missing:
        meshes = sorted(obj.name for obj in bpy.data.objects if obj.type == 'MESH')
        raise FarmError(f"{bpy.data.filepath} has no object named {', '.join(map(repr, missing))} "
                        f"(its mesh objects: {', '.join(meshes) or 'none'})")
    objects = [bpy.data.objects[name] for name in names]
    for obj in objects:
        if obj.type != 'MESH':
            raise FarmError(f"'{obj.name}' is not a mesh (its type is {obj.type})")
        if obj.name not in bpy.context.view_layer.objects:
            raise FarmError(f"'{obj.name}' is not in the view layer "
                            f"'{bpy.context.view_layer.name}' of scene '{bpy.context.scene.name}'")
    return objects


def _cache_paths(package, bpy, objects, folder):
    folder = package.operators.cache_folder(bpy.context, folder)
    return package.operators.cache_paths(folder, objects, "_untangled")


def bake(package, args):
    import bpy

    objects = _objects(bpy, args.objects)
    scene = bpy.context.scene
    if args.frames:
        scene.frame_start, scene.frame_end = args.frames
    if bpy.context.mode != 'OBJECT':
        bpy.ops.object.mode_set(mode='OBJECT')
    for obj in bpy.context.view_layer.objects:
        obj.select_set(False)
    for obj in objects:
        obj.select_set(True)
    bpy.context.view_layer.objects.active = objects[0]
    try:
        result = bpy.ops.cloth_untangle.bake_cache(directory=args.folder)
    except RuntimeError as error:  # poll() refused, or the operator reported an error
        raise FarmError(str(error).strip().replace("\n", " ")) from None
    status = scene.cloth_untangle.status
    if result != {'FINISHED'}:
        raise FarmError(status or f"the bake ended with {result}")
    print(f"{PREFIX}: {status}", flush=True)
    for path in _cache_paths(package, bpy, objects, args.folder):
        print(f"{PREFIX}: wrote {path}", flush=True)


def attach(package, args):
    import bpy

    output = bpy.path.abspath(args.output)
    for group in args.objects:
        objects = _objects(bpy, group)
        for obj, path in zip(objects, _cache_paths(package, bpy, objects, args.folder)):
            if not os.path.isfile(path):
                raise FarmError(f"no cache for '{obj.name}': {path} is missing (did its bake run?)")
            header = package.pc2.read_header(path)
            if header["vertices"] != len(obj.data.vertices):
                raise FarmError(f"{path} has {header['vertices']} vertices, '{obj.name}' has "
                                f"{len(obj.data.vertices)}")
            package.pc2.attach(obj, package.operators.modifier_path(path), header["start"])
            print(f"{PREFIX}: '{obj.name}' plays {path}", flush=True)
    bpy.ops.wm.save_as_mainfile(filepath=output)
    print(f"{PREFIX}: saved {output}", flush=True)


def main(argv=None):
    try:
        args = parse(argv)
    except SystemExit as exit_:  # argparse printed its message
        sys.exit(exit_.code)
    try:
        import bpy

        if not bpy.data.filepath:
            raise FarmError("no saved .blend file was opened (blender -b FILE.blend --python ...)")
        package = _package()
        (bake if args.command == "bake" else attach)(package, args)
    except FarmError as error:
        print(f"{PREFIX}: error: {error}", file=sys.stderr, flush=True)
        sys.exit(1)
    except Exception as error:  # a library, file or Blender error: still one line and code 1
        message = str(getattr(error, "message", None) or error)
        print(f"{PREFIX}: error: {type(error).__name__}: {message}", file=sys.stderr, flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
