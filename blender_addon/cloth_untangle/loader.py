"""Finding and loading libuntangle: the environment variable CLOTH_UNTANGLE_LIB first, then the
add-on's lib/ folder (libuntangle.so on Linux, libuntangle.dll with its MinGW runtime DLLs on
Windows, libuntangle.dylib on macOS). Declares every signature once, refuses a library of
another ABI major version and caches the loaded library. No bpy import."""

from __future__ import annotations

import ctypes
import os
import sys
import threading
from typing import Optional

from .abi import (
    ABI_MAJOR,
    _ENV_VARIABLE,
    LibraryNotFound,
    _SIGNATURES,
    STATUS_NAMES,
    UntangleError,
    UT_ERROR_INVALID_OPERATION,
    UT_OK,
)


class Library:
    """The loaded library with every signature declared; `lib.ut_x(...)` calls the C function
    and `lib.check(status)` raises UntangleError for a failing status."""

    def __init__(self, cdll: ctypes.CDLL, path: str):
        self.cdll = cdll
        self.path = path
        for name, (restype, argtypes) in _SIGNATURES.items():
            function = getattr(cdll, name)  # AttributeError: caught by load()
            function.restype = restype
            function.argtypes = argtypes
            setattr(self, name, function)
        packed = self.ut_abi_version()
        self.version = (packed >> 16, (packed >> 8) & 0xFF, packed & 0xFF)
        # The library's own lists: methods in UtMethod order, then the built-in scenes.
        self.methods = self._names(self.ut_method_name)
        self.scenes = self._names(self.ut_scene_name)

    @staticmethod
    def _names(name_at) -> tuple:
        names = []
        name = ctypes.c_char_p()
        while name_at(len(names), ctypes.byref(name)) == UT_OK:
            names.append(name.value.decode())
        return tuple(names)

    def last_error(self) -> str:
        message = self.ut_last_error()
        return message.decode("utf-8", "replace") if message else ""

    def check(self, status: int) -> None:
        if status != UT_OK:
            raise UntangleError(status, self.last_error() or STATUS_NAMES.get(status, "error"))


_library: Optional[Library] = None
_library_lock = threading.Lock()


def _package_dir() -> str:
    return os.path.dirname(os.path.abspath(__file__))


def library_file_name(platform: Optional[str] = None) -> str:
    """The library's file name in lib/ on a platform (a sys.platform value; default: this one)."""
    platform = sys.platform if platform is None else platform
    if platform in ("win32", "cygwin"):
        return "libuntangle.dll"  # MinGW-w64 keeps the lib prefix
    if platform == "darwin":
        return "libuntangle.dylib"
    return "libuntangle.so"


def library_path_candidates(platform: Optional[str] = None) -> list:
    """Where load() looks, in order: $CLOTH_UNTANGLE_LIB, then the package's lib/ folder (the
    zip carries the libraries of several platforms there; only this platform's is tried)."""
    candidates = []
    from_environment = os.environ.get(_ENV_VARIABLE)
    if from_environment:
        candidates.append(from_environment)
    candidates.append(os.path.join(_package_dir(), "lib", library_file_name(platform)))
    return candidates


# os.add_dll_directory handles of the loaded library's folder; closing one would stop Windows
# from finding the runtime DLLs that the library loads later.
_dll_directories = []


def _load_cdll(path: str, platform: Optional[str] = None) -> ctypes.CDLL:
    platform = sys.platform if platform is None else platform
    if platform != "win32":
        return ctypes.CDLL(path)
    # Python 3.8+ on Windows resolves a DLL's own imports (libgomp-1.dll, libwinpthread-1.dll,
    # libgcc_s_seh-1.dll, shipped beside libuntangle.dll) only from the system folders, the
    # folder of a DLL given by full path and folders added with os.add_dll_directory: PATH and
    # the working directory do not count. The folder is added too, so that a path given through
    # the environment variable works the same way.
    path = os.path.abspath(path)
    directory = os.add_dll_directory(os.path.dirname(path))
    try:
        cdll = ctypes.CDLL(path)
    except OSError:
        directory.close()
        raise
    _dll_directories.append(directory)
    return cdll


def _open(path: str, platform: Optional[str] = None) -> Library:
    # libgomp reads OMP_WAIT_POLICY once, when it is loaded with the library. Its default lets
    # idle threads spin at every barrier; in Blender (and next to other processes on few cores)
    # a spinning thread takes the core the working one needs: two threads ran 10x slower than
    # one under load. A policy the user set is kept.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    cdll = _load_cdll(path, platform)
    try:
        library = Library(cdll, path)
    except AttributeError as error:
        raise OSError(f"not a compatible libuntangle ({error})") from None
    if library.version[0] != ABI_MAJOR:
        raise UntangleError(
            UT_ERROR_INVALID_OPERATION,
            f"{path} has ABI version {'.'.join(map(str, library.version))}, but this add-on "
            f"needs major version {ABI_MAJOR}",
        )
    return library


def load(path: Optional[str] = None) -> Library:
    """The library, loaded on first use and cached. With a path, only that path is tried (and
    the result is not cached). Raises LibraryNotFound listing every path tried, or
    UntangleError for a library of another ABI major version."""
    global _library
    if path is None and _library is not None:
        return _library
    with _library_lock:
        if path is None and _library is not None:
            return _library
        tried = []
        for candidate in [path] if path is not None else library_path_candidates():
            if not os.path.exists(candidate):
                tried.append(f"{candidate}: no such file")
                continue
            try:
                library = _open(candidate)
            except OSError as error:
                tried.append(f"{candidate}: {error}")
                continue
            if path is None:
                _library = library
            return library
        raise LibraryNotFound(
            "cannot load libuntangle; tried:\n  "
            + "\n  ".join(tried)
            + f"\n(set {_ENV_VARIABLE} to the library's path, or put it in the add-on's lib/ folder)"
        )


def abi_version() -> tuple:
    return load().version
