"""Whether a cache folder or file may be trusted.

Generated modules are executed and numba's cache files are pickles, so anything read from the
cache must have been written by the current user: a folder or file is trusted only if the current
user owns it and neither its group nor other users can write to it. Each check returns ``None``
when trusted, else the reason, for a warning.
"""
import os
import stat


def _owner_and_mode(path):
    info = os.lstat(path)
    return info.st_uid, info.st_mode


def distrust_reason(path):
    """Why ``path`` (a folder or a file) is not trusted, or None if it is."""
    uid, mode = _owner_and_mode(path)
    if stat.S_ISLNK(mode):
        return f"{path} is a symbolic link"
    if uid != os.getuid():
        return f"{path} is owned by user id {uid}, not by the current user ({os.getuid()})"
    if mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"{path} is writable by other users (mode {stat.S_IMODE(mode):o})"
    return None


def parent_distrust_reason(path):
    """Why the folder holding ``path`` lets other users replace it, or None.

    A parent writable by others is fine only with the sticky bit (as /tmp has): then other users
    cannot rename or delete what we own in it.
    """
    parent = os.path.dirname(os.path.abspath(path))
    mode = os.stat(parent).st_mode
    if mode & (stat.S_IWGRP | stat.S_IWOTH) and not mode & stat.S_ISVTX:
        return f"its parent {parent} is writable by other users and not sticky (mode {stat.S_IMODE(mode):o})"
    return None
