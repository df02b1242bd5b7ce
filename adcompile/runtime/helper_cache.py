"""Where numba keeps the compiled runtime helpers on disk: in adcompile's compile cache folder.

The numba versions of the helpers (the kernels and overload implementations of the
``kernels/*_numba.py`` modules, among them the special functions' ufuncs, and the ufuncs of
:mod:`.nonfinite`) are compiled with ``cache=True``, so a new process loads them instead of
compiling them again for every signature. numba's own choice of folder would be ``__pycache__``
next to this package (not writable when the package is installed read-only), else
``~/.cache/numba``, and ``NUMBA_CACHE_DIR`` before both. Those ignore adcompile's cache
settings, so instead, once the backend has named its cache folder (:func:`use_cache_folder`),
the helpers' files go to ``<numba subfolder of the cache folder>/runtime-<digest>``: checked for
trust like the rest of the cache, emptied by ``adcompile.clear_cache()``, process-private when
``ADCOMPILE_DISABLE_CACHE`` is set, and written wherever the package is installed. The backend
also hands over a ``gate`` (:func:`use_cache_folder`), called with the folder before numba makes
a helper's cache there and before each save: it makes the folder trusted (never a link) and has
numba read and write its files only through the backend's checks (``backend/numba_cache.py``),
so nothing is unpickled from that folder unchecked. ``<digest>`` covers the source of this
package and its ``kernels`` folder, so an edited helper never meets files compiled from its old
text (numba's own staleness check looks only at the file that defines a function, not at the
helpers it calls).

Importing this module does not import numba; :func:`install_locator` does.
"""
import hashlib
import os
import threading
from pathlib import Path

from .function_ids import make_function_ids_unique

RUNTIME_FOLDER = Path(__file__).resolve().parent

_lock = threading.Lock()
_folder_provider = None  # () -> the folder numba's cache files go to, set by the backend
_gate = None  # (folder) -> None: makes the folder trusted and its files read through the checks
_installed = False
_runtime_digest = None


def folder_digest(folders):
    """sha256 (hex) over the ``*.py`` files of ``folders`` and their sub-folders: their paths
    (relative to the folder) and contents."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(Path(folder).rglob("*.py")):
            name = path.relative_to(folder).as_posix()
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def runtime_digest():
    """16 hex digits identifying the source of the runtime helpers, computed once per process."""
    global _runtime_digest
    if _runtime_digest is None:
        _runtime_digest = folder_digest([RUNTIME_FOLDER])[:16]
    return _runtime_digest


def use_cache_folder(provider, gate):
    """Let the helpers' numba cache live under ``provider()`` (a folder the caller has checked),
    each helper folder passed to ``gate(folder)`` before numba uses it."""
    global _folder_provider, _gate
    _folder_provider, _gate = provider, gate


def helper_cache_folder():
    """The folder the helpers' numba cache files go to now, or None (numba's default places)."""
    if _folder_provider is None:
        return None
    return Path(_folder_provider()) / f"runtime-{runtime_digest()}"


def _is_runtime_source(path):
    try:
        return RUNTIME_FOLDER in Path(path).resolve().parents
    except (OSError, ValueError):
        return False


def install_locator():
    """Put the helpers' cache under :func:`helper_cache_folder` (call before decorating them)."""
    global _installed
    with _lock:
        if _installed:
            return
        from numba.core import caching  # lazy: numba takes ~0.3 s to import
        make_function_ids_unique()  # before anything is compiled into the cache (see function_ids.py)
        cache_impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # _CacheImpl in older numba
        cache_impl._locator_classes.insert(0, _helper_locator_class())
        _installed = True


def _helper_locator_class():
    from numba.core.caching import _CacheLocator  # lazy: numba takes ~0.3 s to import

    class RuntimeHelperLocator(_CacheLocator):
        """numba's cache locator for functions defined in this package (and only those)."""

        def __init__(self, py_func, py_file, folder):
            self._py_file = py_file  # numba names it in its "cannot cache" warning
            self._lineno = py_func.__code__.co_firstlineno
            self._folder = folder

        def ensure_cache_path(self):
            _gate(self._folder)

        def get_cache_path(self):
            return str(self._folder)

        def get_source_stamp(self):
            return runtime_digest()

        def get_disambiguator(self):
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func, py_file):
            folder = helper_cache_folder()
            if folder is None or _gate is None or not _is_runtime_source(py_file):
                return None
            locator = cls(py_func, py_file, folder)
            locator.ensure_cache_path()  # before numba makes the cache's files: they are checked
            return locator

    return RuntimeHelperLocator


def cached_helper_files():
    """The numba cache files of the helpers in the current folder (for tests and inspection)."""
    folder = helper_cache_folder()
    if folder is None or not folder.is_dir():
        return []
    return sorted(folder / name for name in os.listdir(folder))
