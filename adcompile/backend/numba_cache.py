"""numba's disk cache, read and written only through the gate of :mod:`.trust`, and robust to
damaged files.

numba's own ``IndexDataCacheFile`` unpickles whatever index (``.nbi``) and data (``.nbc``)
files it finds, follows symbolic links, and raises (``UnpicklingError``) on a truncated one.
:class:`GatedCacheFile` replaces it for every file adcompile's cache holds:

- every read goes through :func:`.trust.read_trusted` (owner, mode, no link on the way, inside
  the cache folder) *before* anything is unpickled; an untrusted file is deleted and is a cache
  miss, an untrusted folder refuses the whole cache (``cache_folder.refuse``: one warning, no
  more reads or writes there);
- every write goes through :func:`.trust.write_trusted` (a new private file renamed into place);
- every file starts with the sha256 of the rest: a file that does not match (truncated, flipped
  bits) is a cache miss, and numba compiles again and overwrites it; an index of the wrong
  structure, or naming a data file that is not its own, is a miss too;
- every data file holds the key (signature, target, source) it was compiled for, and a load
  whose data holds another key is a miss: numba numbers data files from the index it loaded, so
  processes that add entries at the same time can write the same file name, and the index left
  behind may point a signature at another signature's machine code.

Generated functions get it through :class:`CheckedFunctionCache`, whose files go to
``__pycache__`` next to the generated module (in adcompile's cache folder, even when
``NUMBA_CACHE_DIR`` names another folder: the trust checks and ``clear_cache`` cover only that
one). The runtime helpers' caches are made by numba itself (an overload's implementation gets no
other), so for them :func:`govern_helper_folder` puts a factory in the place of numba's
``IndexDataCacheFile`` (``numba.core.caching`` looks that name up when it makes a cache): it
returns a :class:`GatedCacheFile` for the helpers' folder and numba's own class for every other
folder, whose behaviour is unchanged. A helper's entry that still fails to load (numba cannot
rebuild it) makes the compilation fail: :func:`recompiling_after_damaged_helper_files` then
discards the helpers' files and compiles once more.
Importing this module imports numba.
"""
import contextlib
import hashlib
import io
import pickle
import re
import threading
from pathlib import Path

import numba
from numba.core import caching
from numba.core.caching import CompileResultCacheImpl, FunctionCache

from ..runtime.function_ids import CACHE_FORMAT, make_function_ids_unique
from ..runtime.helper_cache import cached_helper_files, runtime_digest
from .cache_folder import refuse, warn_unwritable
from .trust import Untrusted, UntrustedFolder, ensure_folder, read_trusted, remove_entry, write_trusted

_DIGEST_SIZE = hashlib.sha256().digest_size
_NUMBA_INDEX_FILE = getattr(caching, "_adcompile_numba_index_file", caching.IndexDataCacheFile)
caching._adcompile_numba_index_file = _NUMBA_INDEX_FILE  # numba's class, kept across re-imports

_KEYED_DATA = "adcompile keyed data 1"  # a data file's first item: it holds its key too (load)
_lock = threading.Lock()
_governed = {}  # the helpers' cache folder (str) -> its cache root, or None once refused


class DamagedCacheFile(Exception):
    """A numba cache file whose content does not match its checksum."""


def verified_payload(blob):
    """The content of a cache file's bytes ``blob``; ``DamagedCacheFile`` if its checksum fails."""
    payload = blob[_DIGEST_SIZE:]
    if len(blob) < _DIGEST_SIZE or hashlib.sha256(payload).digest() != blob[:_DIGEST_SIZE]:
        raise DamagedCacheFile("checksum mismatch")
    return payload


class GatedCacheFile(_NUMBA_INDEX_FILE):
    """numba's index and data files inside cache root ``root``, through the gate, checksummed."""

    def __init__(self, root, cache_path, filename_base, source_stamp):
        super().__init__(cache_path=cache_path, filename_base=filename_base, source_stamp=source_stamp)
        self._root = None if root is None else Path(root)  # None: refused, no reads nor writes
        self._own_data = re.compile(re.escape(filename_base) + r"\.[0-9]+\.nbc\Z")

    def _refuse(self, error):
        self._root = None
        refuse(error.reason)

    def _read(self, path):
        """The verified content of ``path``; raises on a missing, untrusted or damaged file."""
        if self._root is None:
            raise FileNotFoundError(path)
        try:
            return verified_payload(read_trusted(self._root, path))
        except UntrustedFolder as error:
            self._refuse(error)
            raise

    def _load_index(self):
        try:
            stream = io.BytesIO(self._read(self._index_path))
            version = pickle.load(stream)
            if version != self._version:
                return {}
            stamp, overloads = pickle.loads(stream.read())
        except Exception:  # missing, untrusted (deleted), damaged, or an unpicklable pickle
            return {}  # saving the next entry rewrites the index
        if stamp != self._source_stamp or not isinstance(overloads, dict) \
                or not all(isinstance(name, str) and self._own_data.match(name) for name in overloads.values()):
            return {}
        return overloads

    def _load_data(self, name):
        if not self._own_data.match(name):
            raise DamagedCacheFile(name)
        return pickle.loads(self._read(self._data_path(name)))

    def load(self, key):
        name = self._load_index().get(key)
        if name is None:
            return None
        try:
            stored = self._load_data(name)
        except Exception:  # missing, untrusted (deleted), damaged: a cache miss
            return None
        # The data must be this key's. numba numbers a new entry's data file by the index it
        # loaded, so two processes adding entries at once may both write `<name>.2.nbc`, and
        # the index kept may name the other process's machine code for this signature.
        if not (isinstance(stored, tuple) and len(stored) == 3 and stored[0] == _KEYED_DATA
                and stored[1] == key):
            return None
        return stored[2]

    def save(self, key, data):
        if self._root is not None:
            super().save(key, (_KEYED_DATA, key, data))  # see load: the data names its key

    @contextlib.contextmanager
    def _open_for_write(self, filepath):
        buffer = io.BytesIO()
        yield buffer
        payload = buffer.getvalue()
        if self._root is None:
            return
        try:
            write_trusted(self._root, filepath, hashlib.sha256(payload).digest() + payload)
        except Untrusted as error:
            self._refuse(error)
        except OSError:  # full disk, a folder where the file belongs: this entry is not cached
            pass


class _GatedInTreeLocator(getattr(caching, "InTreeCacheLocator", None) or caching._InTreeCacheLocator):
    """numba's locator of ``<module folder>/__pycache__``, whose folder is made through the gate."""

    def ensure_cache_path(self):
        path = Path(self.get_cache_path())
        ensure_folder(path.parent, path)


class _NextToTheGeneratedModule(CompileResultCacheImpl):
    """numba's cache implementation, with only the locator of ``<module folder>/__pycache__``."""
    _locator_classes = [_GatedInTreeLocator]


class CheckedFunctionCache(FunctionCache):
    """A ``FunctionCache`` through the gate, whose damaged or unloadable entries are cache misses."""
    _impl_class = _NextToTheGeneratedModule

    def __init__(self, py_func):
        super().__init__(py_func)
        root = Path(self._cache_path).parent  # the generated module's folder: the cache root
        self._cache_file = GatedCacheFile(root, cache_path=self._cache_path, filename_base=self._impl.filename_base,
                                          source_stamp=self._impl.locator.get_source_stamp())

    def _index_key(self, sig, codegen):
        """numba's key (signature, target, bytecode, closure), and the runtime helpers' digest and
        the cache format. A generated function's machine code holds the helpers it calls, and
        numba's staleness check sees only the generated module; the module's name changes with
        the runtime's code already (``cache_key``), and the key says so again where the entry is
        read, so that code compiled against other helpers, or with counted function ids
        (``runtime/function_ids.py``), is never loaded whatever names the files."""
        return super()._index_key(sig, codegen) + ((CACHE_FORMAT, runtime_digest()),)

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception:  # a data file numba cannot rebuild: compile instead
            return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except (Untrusted, OSError) as error:  # the folder became unusable: this entry is not cached
            if isinstance(error, Untrusted):
                refuse(error.reason)


def njit_with_disk_cache(fn, **options):
    """``numba.njit(cache=True, **options)(fn)`` with the checked cache."""
    make_function_ids_unique()  # before the first compile (see runtime/function_ids.py)
    dispatcher = numba.njit(**options)(fn)
    if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT=1: numba returned fn itself
        return dispatcher
    dispatcher._cache = CheckedFunctionCache(dispatcher.py_func)  # what enable_caching() sets
    return dispatcher


# ------------------------------------------------------------------ the runtime helpers' files
def _index_file(cache_path, filename_base, source_stamp):
    """What ``numba.core.caching`` makes in the place of its ``IndexDataCacheFile``."""
    if str(cache_path) in _governed:
        return GatedCacheFile(_governed[str(cache_path)], cache_path, filename_base, source_stamp)
    return _NUMBA_INDEX_FILE(cache_path=cache_path, filename_base=filename_base, source_stamp=source_stamp)


def govern_helper_folder(folder):
    """Make the helpers' cache folder ``folder`` (``<root>/__pycache__/runtime-<digest>``) a
    trusted folder, and have numba read and write its files through :class:`GatedCacheFile`;
    a folder that cannot be trusted refuses the cache (no helper file is read or written)."""
    folder = Path(folder)
    root = folder.parents[1]
    with _lock:
        caching.IndexDataCacheFile = _index_file
        if _governed.get(str(folder), root) is None:
            return  # refused before: stays refused in this process
        try:
            ensure_folder(root, folder)
            _governed[str(folder)] = root
        except Untrusted as error:
            _governed[str(folder)] = None
            refuse(error.reason)
        except OSError as error:  # a full disk, a read-only mount: the helpers compile in memory
            _governed[str(folder)] = None
            warn_unwritable(folder, error)


def _damaged(path, root):
    """Whether the helper's cache file ``path`` is untrusted or fails its checksum or unpickling."""
    try:
        payload = verified_payload(read_trusted(root, path))
        stream = io.BytesIO(payload)
        if path.suffix == ".nbi":
            pickle.load(stream)
        pickle.loads(stream.read())
    except FileNotFoundError:
        return False
    except Exception:  # untrusted, damaged, or whatever garbage makes pickle raise
        return True
    return False


def discard_damaged_helper_files(everything=False):
    """Remove the helpers' cache files that are untrusted, damaged or do not unpickle (or, with
    ``everything``, all of them); the removed paths."""
    removed = []
    for path in cached_helper_files():
        if path.suffix not in (".nbi", ".nbc"):
            continue
        root = _governed.get(str(path.parent)) or path.parents[2]
        try:
            if (everything or _damaged(path, root)) and remove_entry(root, path):
                removed.append(path)
        except (OSError, Untrusted):
            pass
    return removed


def _raised_while_loading_a_cache_entry(error):
    """Whether ``error`` (or one it was raised from) passed through numba's loading of a cache entry."""
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        traceback = error.__traceback__
        while traceback is not None:
            code = traceback.tb_frame.f_code
            if code.co_name in ("load_overload", "_load_overload", "_rebuild") \
                    and code.co_filename.endswith(("caching.py", "compiler.py")):
                return True
            traceback = traceback.tb_next
        error = error.__cause__ or error.__context__
    return False


def recompiling_after_damaged_helper_files(dispatcher):
    """``dispatcher``, whose compilation, if it fails while a helper's cache file is damaged (or
    while numba loaded a cache entry), discards the helpers' files and compiles once more (numba
    then rebuilds them)."""
    if not hasattr(dispatcher, "py_func"):  # NUMBA_DISABLE_JIT=1: numba returned fn itself
        return dispatcher
    compile_signature = dispatcher.compile

    def compile(signature):
        try:
            return compile_signature(signature)
        except Exception as error:
            if not (discard_damaged_helper_files()
                    or (_raised_while_loading_a_cache_entry(error) and discard_damaged_helper_files(everything=True))):
                raise
            return compile_signature(signature)

    dispatcher.compile = compile
    return dispatcher
