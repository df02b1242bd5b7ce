"""Where generated modules and numba's cache files live.

The folder is ``$ADCOMPILE_CACHE_DIR``, else ``$XDG_CACHE_HOME/adcompile``, else
``~/.cache/adcompile``; it is created with mode 0o700. It is used only if it can be trusted
(see :mod:`.trust`: the folder, every folder above it where the configured path lives and where
it resolves to, its ``__pycache__`` and the runtime helpers' folder in it): otherwise, and when
``ADCOMPILE_DISABLE_CACHE`` is set, generated files go to a private temporary folder of this
process, removed at exit, and numba's disk cache is off.

The folder used is the resolved one, so a symbolic link re-pointed later does not move files
already being written; the decision is kept for the process only while the configured path
still names the same folder (device and inode, checked at every ``cache_location``): a new
folder there is judged again. A file of the cache found untrusted while in use makes the caller
refuse the cache (:func:`refuse`) for the rest of the process.
"""
import atexit
import os
import re
import shutil
import tempfile
import threading
import warnings
from pathlib import Path

from ..runtime.helper_cache import runtime_digest
from .trust import Untrusted, ensure_folder, identity, root_reason

_ON_CLEAR = []  # see on_clear

DISABLE_VARIABLE = "ADCOMPILE_DISABLE_CACHE"
NUMBA_SUBFOLDER = "__pycache__"
# Files the backend writes: generated modules ``<name>_<16 hex digits>.py`` (``check_...`` ones
# included), temporary files of interrupted writes, and the job and lock files of compiles
# finished after exit (finish_compiles.py). clear_cache removes only these.
_OWN_FILE = re.compile(r"^(.+_[0-9a-f]{16}\.py(\.compiling)?|\..+\.tmp|finish_compiles_.+\.job)$")

_lock = threading.Lock()
_resolved = {}          # (environment settings) -> (folder, persistent, identity of the configured path)
_private_folder = None  # this process's temporary folder, made on first use


def disk_cache_disabled():
    return os.environ.get(DISABLE_VARIABLE, "").strip().lower() not in ("", "0", "false", "no")


def configured_folder():
    """The folder the environment asks for (it may not exist yet)."""
    override = os.environ.get("ADCOMPILE_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "adcompile"


def _private_temporary_folder():
    global _private_folder
    if _private_folder is None or not _private_folder.is_dir():
        _private_folder = Path(tempfile.mkdtemp(prefix="adcompile-"))  # mode 0o700
        atexit.register(shutil.rmtree, str(_private_folder), ignore_errors=True)
    return _private_folder


def _distrust_reason(folder):
    """Create ``folder`` if needed (mode 0o700); why it cannot be trusted, or None."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if reason := root_reason(folder):
            return reason
        real = Path(os.path.realpath(folder))
        numba_folder = real / NUMBA_SUBFOLDER
        helpers = numba_folder / f"runtime-{runtime_digest()}"
        for path in (numba_folder, helpers):
            if os.path.lexists(path):
                ensure_folder(real, path)  # a link or a file there is deleted
        return None
    except Untrusted as error:
        return error.reason
    except OSError as error:
        return f"it cannot be created or inspected ({error})"


def _warn(folder, reason, private):
    warnings.warn(f"adcompile: not using the compile cache folder {folder}: {reason}; generated code "
                  f"goes to the private temporary folder {private} instead, without a disk cache. "
                  "Fix the folder's owner and permissions (it, and what it holds, must be owned by you "
                  "and writable only by you, and no folder above it writable by others unless sticky) "
                  "or set ADCOMPILE_CACHE_DIR to another folder.", stacklevel=4)


def _identity(folder):
    try:
        return identity(folder)
    except OSError:
        return None


def _resolve():
    if disk_cache_disabled():
        return _private_temporary_folder(), False, None
    folder = configured_folder()
    reason = _distrust_reason(folder)
    if reason is None:
        return Path(os.path.realpath(folder)), True, _identity(folder)
    private = _private_temporary_folder()
    _warn(folder, reason, private)
    return private, False, _identity(folder)


def _settings():
    return (os.environ.get("ADCOMPILE_CACHE_DIR"), os.environ.get("XDG_CACHE_HOME"),
            os.path.expanduser("~"), disk_cache_disabled())


def cache_location():
    """``(folder, persistent)``: where generated files go, and whether numba may cache on disk
    (False for the private temporary folder)."""
    settings = _settings()
    with _lock:
        location = _resolved.get(settings)
        if location is None or not location[0].is_dir() \
                or (location[2] is not None and _identity(configured_folder()) != location[2]):
            location = _resolved[settings] = _resolve()
        return location[:2]


def refuse(reason):
    """Stop using the current cache folder in this process (a file in it was found untrusted):
    warn once, and use the private temporary folder instead."""
    settings = _settings()
    with _lock:
        location = _resolved.get(settings)
        if location is not None and not location[1]:
            return
        private = _private_temporary_folder()
        _warn(configured_folder(), reason, private)
        _resolved[settings] = (private, False, location[2] if location else None)


_unwritable = set()  # cache folders already warned about in this process


def warn_unwritable(folder, error):
    """Warn once per cache folder that ``folder`` in it cannot be written (a full disk, a
    read-only mount): the code is compiled in memory instead, without a disk cache."""
    with _lock:
        configured = str(configured_folder())
        if configured in _unwritable:
            return
        _unwritable.add(configured)
    warnings.warn(f"adcompile: cannot write to the compile cache folder {folder} ({error.strerror or error}); "
                  "compiling in memory, without a disk cache. Free space or make the folder writable, or set "
                  "ADCOMPILE_CACHE_DIR to a writable folder.", stacklevel=4)


def cache_dir():
    """The folder generated modules are written to."""
    return cache_location()[0]


def clear_cache():
    """Remove the compile cache's entries: generated modules and numba's cache files.

    Only files that adcompile writes are removed (the folder may be shared), and the folder
    itself stays. Functions already compiled in this process keep working. Returns the number
    of entries removed.

    >>> import os, tempfile
    >>> from pathlib import Path
    >>> import adcompile
    >>> folder, previous = tempfile.mkdtemp(), os.environ.get("ADCOMPILE_CACHE_DIR")
    >>> os.environ["ADCOMPILE_CACHE_DIR"] = folder  # a cache folder of this example's own
    >>> @adcompile.compile(backend="python")
    ... def double(x):
    ...     return 2.0 * x
    >>> print(double(1.5))
    3.0
    >>> [path.name.startswith("double_") for path in Path(folder).iterdir()]  # its generated module
    [True]
    >>> adcompile.clear_cache()
    1
    >>> list(Path(folder).iterdir())  # gone from disk
    []
    >>> print(double(2.0))  # the function still works
    4.0
    >>> if previous is None:
    ...     del os.environ["ADCOMPILE_CACHE_DIR"]
    ... else:
    ...     os.environ["ADCOMPILE_CACHE_DIR"] = previous
    """
    folder, _ = cache_location()
    removed = 0
    for entry in folder.iterdir():
        if entry.name == NUMBA_SUBFOLDER and entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
        elif _OWN_FILE.match(entry.name) and (entry.is_file() or entry.is_symlink()):
            entry.unlink(missing_ok=True)
            removed += 1
    for forget in _ON_CLEAR:  # the loader's table of loaded functions points at the removed files
        forget()
    return removed


def on_clear(callback):
    """Call ``callback()`` after every ``clear_cache`` (the loader forgets what it loaded)."""
    _ON_CLEAR.append(callback)
    return callback
