"""blender_manifest.toml against the Blender 4.2 extension manifest schema, as documented in
the manual (Advanced > Extensions > How to Create Extensions, manifest fields) and enforced by
`blender --command extension build/validate` in strict mode; Blender 4.2 itself is not packaged
here. Checked: the source manifest and the one in the built zip (CLOTH_UNTANGLE_ZIP), whose
platforms must be exactly those whose library lib/ carries, the zip's layout (one top-level
package folder with __init__.py, as both the 3.x installer and the 4.2 extension installer
accept), and that bl_info stays for Blender 3.x. The validator is shown to reject manifests
that break each rule, so a passing manifest means something."""

import ast
import os
import re
import tomllib
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.normpath(os.path.join(HERE, "..", "..", "blender_addon", "cloth_untangle"))

REQUIRED = {
    "schema_version": str, "id": str, "version": str, "name": str, "tagline": str,
    "maintainer": str, "type": str, "blender_version_min": str, "license": list,
}
OPTIONAL = {
    "blender_version_max": str, "website": str, "copyright": list, "permissions": dict,
    "tags": list, "platforms": list, "wheels": list, "build": dict,
}
PLATFORMS = {"windows-x64", "windows-arm64", "macos-x64", "macos-arm64", "linux-x64"}
PERMISSIONS = {"files", "network", "clipboard", "camera", "microphone"}
ADDON_TAGS = {
    "3D View", "Add Curve", "Add Mesh", "Animation", "Bake", "Camera", "Compositing",
    "Development", "Game Engine", "Geometry Nodes", "Grease Pencil", "Import-Export", "Lighting",
    "Material", "Modeling", "Mesh", "Node", "Object", "Paint", "Pipeline", "Physics", "Render",
    "Rigging", "Scene", "Sculpt", "Sequencer", "System", "Text Editor", "Tracking",
    "User Interface", "UV",
}
SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
TERSE_LIMIT = 64  # taglines and permission reasons
LIBRARY_PLATFORM = {"libuntangle.so": "linux-x64", "libuntangle.dll": "windows-x64",
                    "libuntangle.dylib": "macos-arm64"}


def terse_text_errors(what, text):
    if not isinstance(text, str) or not text.strip():
        return [f"{what}: a non-empty string expected"]
    errors = []
    if text != text.strip() or re.search(r"[\x00-\x1f\x7f]", text):
        errors.append(f"{what}: no surrounding white space or control characters")
    if len(text) > TERSE_LIMIT:
        errors.append(f"{what}: {len(text)} characters, at most {TERSE_LIMIT}")
    if not (text[-1].isalnum() or text[-1] in ")]}"):
        errors.append(f"{what}: must not end with punctuation")
    return errors


def manifest_errors(manifest):
    """Every rule the manifest breaks, as readable lines (empty: valid)."""
    errors = []
    for key, kind in REQUIRED.items():
        if key not in manifest:
            errors.append(f"missing {key}")
        elif not isinstance(manifest[key], kind):
            errors.append(f"{key} must be a {kind.__name__}")
    for key, kind in OPTIONAL.items():
        if key in manifest and not isinstance(manifest[key], kind):
            errors.append(f"{key} must be a {kind.__name__}")
    for key in manifest.keys() - REQUIRED.keys() - OPTIONAL.keys():
        errors.append(f"unknown key {key}")
    if errors:
        return errors

    for key in ("schema_version", "version"):
        if not SEMVER.match(manifest[key]):
            errors.append(f"{key} {manifest[key]!r} is not a semantic version")
    identifier = manifest["id"]
    if (not identifier.isidentifier() or "__" in identifier or identifier.startswith("_")
            or identifier.endswith("_")):
        errors.append(f"id {identifier!r}: an identifier without leading, trailing or double _")
    if manifest["type"] not in ("add-on", "theme"):
        errors.append(f"type {manifest['type']!r}")
    errors += terse_text_errors("tagline", manifest["tagline"])
    for key in ("name", "maintainer"):
        if not manifest[key].strip() or manifest[key] != manifest[key].strip():
            errors.append(f"{key}: a non-empty string without surrounding white space")
    for key in ("blender_version_min", "blender_version_max"):
        if key in manifest and not re.fullmatch(r"\d+(\.\d+){0,2}", manifest[key]):
            errors.append(f"{key} {manifest[key]!r}: numbers separated by single dots")
    if not manifest["license"] or not all(
            isinstance(item, str) and re.fullmatch(r"SPDX:[A-Za-z0-9.+-]+", item)
            for item in manifest["license"]):
        errors.append(f"license {manifest['license']!r}: a non-empty list of SPDX:<identifier>")
    for tag in manifest.get("tags", []):
        if tag not in ADDON_TAGS:
            errors.append(f"tag {tag!r} is not one of the add-on tags")
    platforms = manifest.get("platforms")
    if platforms is not None:
        if not platforms:
            errors.append("platforms may not be empty")
        for platform in platforms:
            if platform not in PLATFORMS:
                errors.append(f"platform {platform!r} is not one of {sorted(PLATFORMS)}")
        if len(set(platforms)) != len(platforms):
            errors.append("platforms repeat")
    for key, reason in manifest.get("permissions", {}).items():
        if key not in PERMISSIONS:
            errors.append(f"permission {key!r} is not one of {sorted(PERMISSIONS)}")
        errors += terse_text_errors(f"permission {key}", reason)
    return errors


def bl_info_of(source):
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "bl_info" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


VALID = {
    "schema_version": "1.0.0", "id": "cloth_untangle", "version": "0.1.0",
    "name": "Cloth Untangle", "tagline": "Remove self-intersections from cloth meshes",
    "maintainer": "someone", "type": "add-on", "blender_version_min": "4.2.0",
    "license": ["SPDX:MIT"], "platforms": ["linux-x64"], "tags": ["Physics"],
    "permissions": {"files": "Writes caches"},
}


class Validator(unittest.TestCase):
    def test_accepts_a_valid_manifest(self):
        self.assertEqual(manifest_errors(VALID), [])

    def test_rejects_each_broken_rule(self):
        broken = {
            "tagline ending in a full stop": {"tagline": "Removes intersections."},
            "tagline too long": {"tagline": "x" * 65},
            "the old files reason (68 characters)": {"permissions": {
                "files": "Write baked PC2 caches next to the .blend file or to a chosen folder"}},
            "unknown permission": {"permissions": {"disk": "Writes caches"}},
            "list of permissions": {"permissions": ["files"]},
            "platform spelled like a wheel": {"platforms": ["linux-x86_64"]},
            "empty platforms": {"platforms": []},
            "id with a hyphen": {"id": "cloth-untangle"},
            "version not semantic": {"version": "0.1"},
            "license without SPDX": {"license": ["MIT"]},
            "unknown tag": {"tags": ["Cloth"]},
            "type": {"type": "addon"},
            "unknown key": {"description": "x"},
        }
        for what, change in broken.items():
            with self.subTest(what):
                self.assertNotEqual(manifest_errors({**VALID, **change}), [], what)
        without_license = dict(VALID)
        del without_license["license"]
        self.assertEqual(manifest_errors(without_license), ["missing license"])


class SourceManifest(unittest.TestCase):
    def test_source_manifest_is_valid(self):
        with open(os.path.join(PACKAGE, "blender_manifest.toml"), "rb") as file:
            manifest = tomllib.load(file)
        self.assertEqual(manifest_errors(manifest), [])
        self.assertIn("files", manifest["permissions"], "bakes write PC2 files")
        self.assertGreaterEqual(tuple(map(int, manifest["blender_version_min"].split("."))), (4, 2, 0))

    def test_bl_info_stays_for_3x_and_agrees_with_the_manifest(self):
        with open(os.path.join(PACKAGE, "__init__.py"), encoding="utf-8") as file:
            info = bl_info_of(file.read())
        with open(os.path.join(PACKAGE, "blender_manifest.toml"), "rb") as file:
            manifest = tomllib.load(file)
        self.assertIsNotNone(info, "__init__.py has no bl_info")
        self.assertEqual(info["name"], manifest["name"])
        self.assertEqual(".".join(map(str, info["version"])), manifest["version"])
        self.assertLess(tuple(info["blender"]), (4, 2, 0))


class BuiltZip(unittest.TestCase):
    def setUp(self):
        self.path = os.environ.get("CLOTH_UNTANGLE_ZIP")
        if not self.path:
            self.skipTest("CLOTH_UNTANGLE_ZIP is not set (CTest sets it to the built zip)")

    def test_zip_layout_and_manifest(self):
        with zipfile.ZipFile(self.path) as archive:
            names = archive.namelist()
            tops = {name.split("/", 1)[0] for name in names}
            self.assertEqual(tops, {"cloth_untangle"}, "one top-level package folder")
            self.assertIn("cloth_untangle/__init__.py", names)
            manifest = tomllib.loads(archive.read("cloth_untangle/blender_manifest.toml").decode())
        self.assertEqual(manifest_errors(manifest), [])
        libraries = {os.path.basename(n) for n in names if n.startswith("cloth_untangle/lib/")}
        carried = sorted(LIBRARY_PLATFORM[name] for name in libraries if name in LIBRARY_PLATFORM)
        self.assertTrue(carried, f"lib/ holds no libuntangle: {sorted(libraries)}")
        self.assertEqual(sorted(manifest["platforms"]), carried)
        if "libuntangle.dll" in libraries:
            # The DLL's imports beyond Windows itself ship beside it.
            self.assertTrue({"libgomp-1.dll", "libwinpthread-1.dll"} <= libraries, sorted(libraries))


if __name__ == "__main__":
    unittest.main()
