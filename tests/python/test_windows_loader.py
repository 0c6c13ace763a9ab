"""loader.py's Windows loading path, run on Linux: no Windows Python is packaged by Debian, so
the calls Windows would make are recorded instead (sys.platform set to "win32", ctypes.CDLL
and os.add_dll_directory replaced). The DLL itself is tested under Wine (tests/windows).

Guards: the add-on looks for libuntangle.dll (MinGW's name) and nothing else in lib/; the
folder of the DLL is added with os.add_dll_directory before the DLL is loaded by its full path
(Python 3.8+ finds the DLL's own imports, the MinGW runtime DLLs beside it, only that way) and
stays added while the library is in use; a failed load closes it again and the error names
every path tried with the reason Windows gave."""

import os
import tempfile
import unittest
from unittest import mock

from support import load_fresh_addon_module


class FakeFunction:
    """A ctypes function stand-in: accepts restype/argtypes, returns ABI version 1.0.0."""

    def __call__(self, *args):
        return 1 << 16


class FakeCdll:
    def __init__(self, path):
        self.path = path

    def __getattr__(self, name):
        if not name.startswith("ut_"):
            raise AttributeError(name)
        function = FakeFunction()
        setattr(self, name, function)
        return function


class DllDirectory:
    def __init__(self, path, calls):
        self.path = path
        self.closed = False
        calls.append(("add_dll_directory", path))

    def close(self):
        self.closed = True


class WindowsLoader(unittest.TestCase):
    def setUp(self):
        self.loader = load_fresh_addon_module("loader")  # nothing cached from other tests
        self.folder = tempfile.TemporaryDirectory()
        self.package = os.path.join(self.folder.name, "cloth_untangle")
        self.lib = os.path.join(self.package, "lib")
        os.makedirs(self.lib)
        # What the zip carries: both platforms' libraries and the MinGW runtime DLLs.
        for name in ("libuntangle.so", "libuntangle.dll", "libgomp-1.dll", "libwinpthread-1.dll"):
            open(os.path.join(self.lib, name), "wb").close()
        self.calls = []
        self.directories = []

    def tearDown(self):
        self.folder.cleanup()

    def add_dll_directory(self, path):
        directory = DllDirectory(path, self.calls)
        self.directories.append(directory)
        return directory

    def run_load(self, cdll, environment=None):
        """load() as it runs on Windows, with environment as the only CLOTH_UNTANGLE_LIB."""
        with mock.patch.dict(os.environ, environment or {}):
            if not environment:
                os.environ.pop("CLOTH_UNTANGLE_LIB", None)  # restored by patch.dict
            with mock.patch.object(self.loader.sys, "platform", "win32"), \
                    mock.patch.object(self.loader, "_package_dir", lambda: self.package), \
                    mock.patch.object(self.loader.os, "add_dll_directory", self.add_dll_directory,
                                      create=True), \
                    mock.patch.object(self.loader.ctypes, "CDLL", cdll):
                return self.loader.load()

    def recording_cdll(self, error=None):
        def cdll(path):
            self.calls.append(("CDLL", path))
            if error is not None:
                raise OSError(error)
            return FakeCdll(path)

        return cdll

    def test_library_names_per_platform(self):
        self.assertEqual(self.loader.library_file_name("win32"), "libuntangle.dll")
        self.assertEqual(self.loader.library_file_name("linux"), "libuntangle.so")
        self.assertEqual(self.loader.library_file_name("darwin"), "libuntangle.dylib")

    def test_search_order_on_windows(self):
        with mock.patch.object(self.loader, "_package_dir", lambda: self.package), \
                mock.patch.dict(os.environ, {"CLOTH_UNTANGLE_LIB": r"C:\tools\libuntangle.dll"}):
            self.assertEqual(self.loader.library_path_candidates("win32"),
                             [r"C:\tools\libuntangle.dll", os.path.join(self.lib, "libuntangle.dll")])
        with mock.patch.object(self.loader, "_package_dir", lambda: self.package), \
                mock.patch.dict(os.environ, {}, clear=True):
            self.assertEqual(self.loader.library_path_candidates("win32"),
                             [os.path.join(self.lib, "libuntangle.dll")])

    def test_dll_folder_is_added_before_the_dll_is_loaded_by_full_path(self):
        library = self.run_load(self.recording_cdll())
        dll = os.path.join(self.lib, "libuntangle.dll")
        self.assertEqual(self.calls, [("add_dll_directory", self.lib), ("CDLL", dll)])
        self.assertEqual(library.path, dll)
        self.assertEqual(library.version, (1, 0, 0))
        # Kept open while the library is loaded: its runtime DLLs may load later.
        self.assertEqual(len(self.directories), 1)
        self.assertFalse(self.directories[0].closed)
        self.assertIn(self.directories[0], self.loader._dll_directories)

    def test_failed_load_lists_every_path_and_closes_the_folder(self):
        missing = os.path.join(self.folder.name, "elsewhere", "libuntangle.dll")
        error = "[WinError 126] The specified module could not be found"
        with self.assertRaises(self.loader.LibraryNotFound) as caught:
            self.run_load(self.recording_cdll(error), {"CLOTH_UNTANGLE_LIB": missing})
        message = caught.exception.message
        self.assertIn(f"{missing}: no such file", message)
        self.assertIn(f"{os.path.join(self.lib, 'libuntangle.dll')}: {error}", message)
        self.assertNotIn("libuntangle.so", message)  # another platform's library is not tried
        self.assertIn("CLOTH_UNTANGLE_LIB", message)
        self.assertEqual(len(self.directories), 1)
        self.assertTrue(self.directories[0].closed)
        self.assertEqual(self.loader._dll_directories, [])

    def test_linux_does_not_add_dll_folders(self):
        calls = []
        with mock.patch.object(self.loader.sys, "platform", "linux"), \
                mock.patch.object(self.loader.os, "add_dll_directory", lambda p: calls.append(p),
                                  create=True), \
                mock.patch.object(self.loader.ctypes, "CDLL", FakeCdll):
            self.loader._load_cdll(os.path.join(self.lib, "libuntangle.so"))
        self.assertEqual(calls, [])


if __name__ == "__main__":
    unittest.main()
