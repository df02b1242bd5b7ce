"""numba's disk cache, made robust to damaged files.

numba's own ``FunctionCache`` raises (``UnpicklingError``) on a truncated or corrupted index
(``.nbi``) or data (``.nbc``) file, and would load machine code with flipped bits. Here every
cache file of a generated function starts with the sha256 of the rest: a file that does not
match is a cache miss, and numba compiles again and overwrites it. The files always go to
``__pycache__`` next to the generated module, in adcompile's cache folder, even when
``NUMBA_CACHE_DIR`` names another folder: the trust checks and ``clear_cache`` cover only that one.

The runtime helpers' cache files (``runtime/helper_cache.py``) are written by numba's own cache
(an overload's implementation gets no other), so they cannot carry a checksum: a compilation that
fails looks for helper files that do not unpickle, removes them and compiles once more.
Importing this module imports numba.
"""
import contextlib
import hashlib
import io
import pickle

import numba
from numba.core import caching
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile

from ..runtime.helper_cache import cached_helper_files

_DIGEST_SIZE = hashlib.sha256().digest_size


class DamagedCacheFile(Exception):
    """A numba cache file whose content does not match its checksum."""


class _ChecksummedCacheFile(IndexDataCacheFile):
    """numba's index and data files, each prefixed with the sha256 of its content."""

    @contextlib.contextmanager
    def _open_for_write(self, filepath):
        buffer = io.BytesIO()
        yield buffer
        payload = buffer.getvalue()
        with super()._open_for_write(filepath) as handle:  # a temporary file, then os.replace
            handle.write(hashlib.sha256(payload).digest() + payload)

    @staticmethod
    def _verified_payload(path):
        with open(path, "rb") as handle:
            blob = handle.read()
        payload = blob[_DIGEST_SIZE:]
        if hashlib.sha256(payload).digest() != blob[:_DIGEST_SIZE]:
            raise DamagedCacheFile(path)
        return payload

    def _load_index(self):
        try:
            stream = io.BytesIO(self._verified_payload(self._index_path))
            version = pickle.load(stream)
            if version != self._version:
                return {}
            stamp, overloads = pickle.loads(stream.read())
        except FileNotFoundError:
            return {}
        except (DamagedCacheFile, pickle.UnpicklingError, EOFError, ValueError, TypeError):
            return {}  # saving the next entry rewrites the index
        return overloads if stamp == self._source_stamp else {}

    def _load_data(self, name):
        return pickle.loads(self._verified_payload(self._data_path(name)))


class _NextToTheGeneratedModule(CompileResultCacheImpl):
    """numba's cache implementation, with only the locator of ``<module folder>/__pycache__``."""
    _locator_classes = [getattr(caching, "InTreeCacheLocator", None) or caching._InTreeCacheLocator]


class CheckedFunctionCache(FunctionCache):
    """A ``FunctionCache`` whose damaged or unloadable entries are cache misses."""
    _impl_class = _NextToTheGeneratedModule

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _ChecksummedCacheFile(cache_path=self._cache_path,
                                                 filename_base=self._impl.filename_base,
                                                 source_stamp=self._impl.locator.get_source_stamp())

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception:  # damaged data file, or one numba cannot rebuild: compile instead
            return None


def njit_with_disk_cache(fn, **options):
    """``numba.njit(cache=True, **options)(fn)`` with the checked cache."""
    dispatcher = numba.njit(**options)(fn)
    if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT=1: numba returned fn itself
        return dispatcher
    dispatcher._cache = CheckedFunctionCache(dispatcher.py_func)  # what enable_caching() sets
    return dispatcher


def _unpickles(path):
    """Whether numba's cache file ``path`` (an index: a version, then a pickle) still unpickles."""
    try:
        with open(path, "rb") as handle:
            if path.suffix == ".nbi":
                pickle.load(handle)
            pickle.loads(handle.read())
    except FileNotFoundError:
        pass
    except Exception:  # whatever garbage makes pickle raise
        return False
    return True


def discard_damaged_helper_files():
    """Remove the helpers' cache files that do not unpickle; the removed paths."""
    damaged = [path for path in cached_helper_files() if path.suffix in (".nbi", ".nbc") and not _unpickles(path)]
    for path in damaged:
        path.unlink(missing_ok=True)
    return damaged


def recompiling_after_damaged_helper_files(dispatcher):
    """``dispatcher``, whose compilation, if it fails while a helper's cache file is damaged,
    discards the damaged files and compiles once more (numba then rebuilds them)."""
    if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT=1: numba returned fn itself
        return dispatcher
    compile_signature = dispatcher.compile

    def compile(signature):
        try:
            return compile_signature(signature)
        except Exception:
            if not discard_damaged_helper_files():
                raise
            return compile_signature(signature)

    dispatcher.compile = compile
    return dispatcher
