"""Writing generated modules into the cache folder so that no reader sees a wrong file.

A generated module lives directly in the cache folder (its root, checked by ``cache_folder``),
and every read and write goes through the gate of :mod:`.trust`. A write goes to a new private
temporary file in the same folder, then ``os.replace`` puts it in place, so a concurrent reader
sees either no file or the whole file. An existing file is kept only if it is trusted and its
text is exactly the expected source (its name is a digest of that source); otherwise it is
rewritten and the numba cache files made from it are discarded. The module is then executed
from the source text in memory (``loader.py``), never imported from the file.
"""
import os
from pathlib import Path

from .cache_folder import NUMBA_SUBFOLDER
from .trust import Untrusted, discard_untrusted, read_trusted, remove_entry, write_trusted


def write_atomically(path, text):
    path = Path(path)
    write_trusted(path.parent, path, text.encode("utf-8"))


def _holds(path, text):
    """Whether ``path`` is a trusted file whose whole text is ``text``."""
    try:
        return read_trusted(path.parent, path) == text.encode("utf-8")
    except (OSError, Untrusted):
        return False


def numba_cache_files(path):
    """numba's index and data files for the functions of module file ``path``."""
    folder = Path(path).parent / NUMBA_SUBFOLDER
    prefix = Path(path).stem + "."
    try:
        return [folder / name for name in sorted(os.listdir(folder)) if name.startswith(prefix)]
    except (FileNotFoundError, NotADirectoryError):
        return []


def discard_numba_cache(path, only_untrusted=False):
    """Remove numba's cache files for module file ``path`` (or only those not trusted)."""
    root = Path(path).parent
    for cache_file in numba_cache_files(path):
        if only_untrusted:
            discard_untrusted(root, cache_file)
            continue
        remove_entry(root, cache_file)


def ensure_source_file(path, text):
    """Make ``path`` a trusted file holding exactly ``text``; leave a correct file untouched (its
    modification time is part of numba's cache key)."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        if _holds(path, text):
            return
        discard_numba_cache(path)  # made from another text, or planted
    write_atomically(path, text)
