"""The gate every file of the compile cache passes: who could have written it.

Generated modules are executed and numba's cache files are pickles, so anything read from the
cache must have been written by the current user. The rules, checked here and nowhere else:

- **The cache root** (``$ADCOMPILE_CACHE_DIR`` or its default) is owned by the current user and
  writable by no one else. Every folder above it, both where the configured path lives (a
  symbolic link is judged in the folder holding it) and where it resolves to, is owned by the
  current user or root, and is writable by others only with the sticky bit (as ``/tmp``): else
  another user could rename a folder of the chain and put their own in its place. A symbolic
  link on the way is owned by the current user or root (in a sticky folder, its owner may
  re-point it). :func:`root_reason` says why a root fails.
- **Everything inside the root** (generated sources, numba's index and data files of generated
  functions and of the runtime helpers, temporary files): each component between the root and
  the file is a real folder (no symbolic link) owned by the current user and writable by no one
  else, the file is a regular file with the same owner and mode rule, and its path, resolved,
  is inside the root. :func:`entry_reason` says why an entry fails.
- **Reading** (:func:`read_trusted`) opens the file without following a link and checks the
  opened file itself (``fstat``), so what is read is what was checked. An untrusted file in a
  trusted folder is ours to delete, and is deleted, never read. **Writing**
  (:func:`write_trusted`) creates a new private file (mode 0o600, exclusively) next to the
  target and renames it into place: readers see the old file or the whole new one.
- **A folder inside the root** that fails (owned by someone else, or writable by others) cannot
  be repaired safely: :class:`UntrustedFolder` is raised and the caller refuses the cache. A symbolic
  link or a file where a folder belongs is deleted and the folder made (:func:`ensure_folder`).

Each ``*_reason`` returns ``None`` when trusted, else the reason, for a warning.
"""
import os
import stat
from pathlib import Path

_WRITABLE_BY_OTHERS = stat.S_IWGRP | stat.S_IWOTH
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_CREATE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                 | getattr(os, "O_CLOEXEC", 0))


class Untrusted(Exception):
    """A cache entry (or a folder on the way to it) that someone else could have written."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class UntrustedFolder(Untrusted):
    """A folder between the cache root and an entry that cannot be trusted: the cache is refused."""


def _uid():
    return os.getuid() if hasattr(os, "getuid") else None


def _owner_reason(path, info, allow_root=False):
    uid = _uid()
    if uid is None or info.st_uid == uid or (allow_root and info.st_uid == 0):
        return None
    return f"{path} is owned by user id {info.st_uid}, not by the current user ({uid})"


def distrust_reason(path, info=None):
    """Why ``path`` (a folder or a file, not followed if a link) is not trusted, or None."""
    info = os.lstat(path) if info is None else info
    if stat.S_ISLNK(info.st_mode):
        return f"{path} is a symbolic link"
    if reason := _owner_reason(path, info):
        return reason
    if info.st_mode & _WRITABLE_BY_OTHERS:
        return f"{path} is writable by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def _above_reason(folder):
    """Why ``folder``, above the cache root, lets another user replace what it holds, or None."""
    info = os.lstat(folder)
    if stat.S_ISLNK(info.st_mode):
        return _owner_reason(f"the symbolic link {folder} above it", info, allow_root=True)
    if reason := _owner_reason(f"the folder {folder} above it", info, allow_root=True):
        return reason
    if info.st_mode & _WRITABLE_BY_OTHERS and not info.st_mode & stat.S_ISVTX:
        return (f"the folder {folder} above it is writable by other users and not sticky "
                f"(mode {stat.S_IMODE(info.st_mode):o})")
    return None


def _chain_reason(path):
    """Check every folder above absolute ``path`` (not ``path`` itself), from ``/`` down."""
    path = Path(path)
    for folder in reversed(path.parents):
        if reason := _above_reason(folder):
            return reason
    return None


def root_reason(configured):
    """Why the cache root ``configured`` (an existing folder, maybe reached through links) is not
    trusted, or None. Judged where the configured path lives and where it resolves to."""
    lexical = Path(os.path.abspath(configured))
    real = Path(os.path.realpath(lexical))
    if reason := _chain_reason(lexical):
        return reason
    link = os.lstat(lexical)
    if stat.S_ISLNK(link.st_mode) and (reason := _owner_reason(f"the symbolic link {lexical}", link)):
        return reason
    if real != lexical and (reason := _chain_reason(real)):
        return reason
    info = os.lstat(real)
    if not stat.S_ISDIR(info.st_mode):
        return f"{real} is not a folder"
    return distrust_reason(real, info)


def identity(path):
    """(device, inode) of the folder ``path`` resolves to: a changed identity is a new folder."""
    info = os.stat(path)
    return info.st_dev, info.st_ino


def _components(root, path):
    """The paths from just below ``root`` down to ``path``; ``Untrusted`` if it is not inside."""
    root, path = Path(root), Path(os.path.abspath(path))
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise Untrusted(f"{path} is not inside the cache folder {root}") from None
    if not parts or any(part in ("", ".", "..") for part in parts):
        raise Untrusted(f"{path} is not inside the cache folder {root}")
    return [root.joinpath(*parts[:k + 1]) for k in range(len(parts))]


def _folders_reason(folders):
    for folder in folders:
        info = os.lstat(folder)
        if not stat.S_ISDIR(info.st_mode):
            return f"{folder} is not a folder" if not stat.S_ISLNK(info.st_mode) else f"{folder} is a symbolic link"
        if reason := distrust_reason(folder, info):
            return reason
    return None


def entry_reason(root, path):
    """Why ``path`` inside cache root ``root`` (a file or folder, which must exist) is not
    trusted, or None."""
    try:
        components = _components(root, path)
        if reason := _folders_reason(components[:-1]):
            return reason
        if reason := distrust_reason(components[-1]):
            return reason
        real = os.path.realpath(components[-1])
        if os.path.commonpath([real, os.path.realpath(root)]) != os.path.realpath(root):
            return f"{path} resolves to {real}, outside the cache folder {root}"
    except Untrusted as error:
        return error.reason
    return None


def _folder_of(root, path):
    """Raise ``Untrusted`` unless every folder between ``root`` and ``path`` is trusted."""
    components = _components(root, path)
    if reason := _folders_reason(components[:-1]):
        raise UntrustedFolder(reason)
    return components[-1]


def ensure_folder(root, folder):
    """Make ``folder`` (inside ``root``) a trusted folder: missing ones are made (mode 0o700), a
    link or a file in the way is deleted; ``Untrusted`` if a folder on the way is not trusted."""
    for path in _components(root, folder):
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:  # made meanwhile by another process of ours: checked below
                pass
            info = os.lstat(path)
        if not stat.S_ISDIR(info.st_mode):  # a link or a file where a folder belongs: ours to delete
            os.unlink(path)
            os.mkdir(path, 0o700)
            info = os.lstat(path)
        if reason := distrust_reason(path, info):
            raise UntrustedFolder(reason)
    return Path(folder)


def discard_untrusted(root, path):
    """Delete ``path`` (inside ``root``) if it is not trusted and its folder is; whether it did."""
    try:
        _folder_of(root, path)
        if entry_reason(root, path) is None:
            return False
        os.unlink(path)
        return True
    except (OSError, Untrusted):
        return False


def remove_entry(root, path):
    """Delete the file ``path`` inside ``root`` (no folder on the way may be a link); whether it
    was there."""
    path = _folder_of(root, path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True


def read_trusted(root, path):
    """The bytes of the trusted file ``path`` inside ``root``. An untrusted file is deleted and
    ``Untrusted`` raised; ``FileNotFoundError`` if there is none."""
    path = _folder_of(root, path)
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as error:
        if isinstance(error, FileNotFoundError):
            raise
        reason = entry_reason(root, path) or f"{path} cannot be opened ({error})"
        discard_untrusted(root, path)
        raise Untrusted(reason) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        reason = (distrust_reason(path, info) if stat.S_ISREG(info.st_mode) else f"{path} is not a regular file")
        if reason is None:
            return handle.read()
    discard_untrusted(root, path)
    raise Untrusted(reason)


def write_trusted(root, path, data):
    """Write ``data`` (bytes) to ``path`` inside ``root``: a new private file next to it, renamed
    into place (an untrusted file or a link there is replaced, never followed)."""
    path = _folder_of(root, path)
    temporary = None
    for attempt in range(100):
        candidate = path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp"
        try:
            fd = os.open(candidate, _CREATE_FLAGS, 0o600)
        except FileExistsError:
            continue
        temporary = candidate
        break
    if temporary is None:
        raise FileExistsError(f"no free temporary name next to {path}")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
