"""Writing generated modules into the cache folder so that no reader sees a wrong file.

A write goes to a temporary file in the same folder, then ``os.replace`` puts it in place, so a
concurrent reader sees either no file or the whole file. An existing file is kept only if it is
trusted and its text is exactly the expected source (its name is a digest of that source);
otherwise it is rewritten and the numba cache files made from it are discarded.
"""
import os
import tempfile
from pathlib import Path

from .cache_folder import NUMBA_SUBFOLDER
from .trust import distrust_reason


def write_atomically(path, text):
    path = Path(path)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")  # 0o600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _holds(path, text):
    """Whether ``path`` is a trusted file whose whole text is ``text``."""
    try:
        if distrust_reason(path) is not None:
            return False
        return path.read_bytes() == text.encode("utf-8")
    except (OSError, UnicodeError):
        return False


def numba_cache_files(path):
    """numba's index and data files for the functions of module file ``path``."""
    folder = Path(path).parent / NUMBA_SUBFOLDER
    prefix = Path(path).stem + "."
    try:
        return [folder / name for name in os.listdir(folder) if name.startswith(prefix)]
    except FileNotFoundError:
        return []


def discard_numba_cache(path, only_untrusted=False):
    """Remove numba's cache files for module file ``path`` (or only those not trusted)."""
    for cache_file in numba_cache_files(path):
        if only_untrusted and distrust_reason(cache_file) is None:
            continue
        try:
            cache_file.unlink()
        except FileNotFoundError:
            pass


def ensure_source_file(path, text):
    """Make ``path`` a trusted file holding exactly ``text``; leave a correct file untouched (its
    modification time is part of numba's cache key)."""
    path = Path(path)
    if path.exists() or path.is_symlink():
        if _holds(path, text):
            return
        discard_numba_cache(path)  # made from another text, or planted
    write_atomically(path, text)
