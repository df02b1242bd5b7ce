"""Saving and restoring a Module: ``state_dict``, ``load_state_dict`` and ``.npz`` files.

``state_dict`` maps dotted names (``fc1.weight``) to copies of the parameter and persistent
buffer arrays. ``load_state_dict`` checks every key, shape and dtype before it writes
anything, so a failing load leaves the module as it was. Files are plain ``.npz`` archives
read with ``allow_pickle=False``: loading a checkpoint never unpickles.
"""
import zipfile
import zlib
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

import numpy as np

from ..errors import AdCompileError

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class StateDictError(AdCompileError, RuntimeError):
    """A state dict that does not fit the module (PyTorch raises a RuntimeError)."""


class StateFileError(StateDictError, ValueError):
    """A file that is not a state archive (garbage bytes, a pickle, an ``.npy``): also a
    ``ValueError``, as numpy's ``np.load`` raises."""


def _entries(module):
    """(dotted name, owner module, registry, local name) of everything a state dict holds."""
    for prefix, owner in module.named_modules():
        dotted = (prefix + ".") if prefix else ""
        for name, param in owner._parameters.items():
            if param is not None:
                yield dotted + name, owner, "_parameters", name
        for name, buffer in owner._buffers.items():
            if buffer is not None and name not in owner._non_persistent:
                yield dotted + name, owner, "_buffers", name


def _current(owner, registry, name):
    value = getattr(owner, registry)[name]
    return value.data if registry == "_parameters" else value


def state_dict(module):
    return OrderedDict((key, np.array(_current(owner, registry, name)))
                       for key, owner, registry, name in _entries(module))


def load_state_dict(module, state, strict=True):
    _check_is_state_dict(module, state)
    entries = list(_entries(module))
    keys = {key for key, *_ in entries}
    missing = [key for key, *_ in entries if key not in state]
    unexpected = [key for key in state if key not in keys]
    problems = []
    if strict and missing:
        problems.append("Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ".")
    if strict and unexpected:
        problems.append("Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ".")
    updates = []
    for key, owner, registry, name in entries:
        if key not in state:
            continue
        target = _current(owner, registry, name)
        value = _as_array(state[key])
        if value is None:
            problems.append(f"{key} is a {type(state[key]).__name__}, not an array of numbers.")
        elif value.shape != target.shape:
            problems.append(f"size mismatch for {key}: copying a param with shape {value.shape} from "
                            f"checkpoint, the shape in current model is {target.shape}.")
        elif value.dtype.kind not in "fiub":
            problems.append(f"type mismatch for {key}: a {value.dtype} array cannot be loaded into "
                            f"{target.dtype}.")
        else:
            updates.append((target, value))
    if problems:
        raise StateDictError(f"Error(s) in loading state_dict for {type(module).__name__}:\n\t"
                             + "\n\t".join(problems))
    for target, value in updates:  # in place: optimizers and compiled steps keep the same arrays
        target[...] = value
    return IncompatibleKeys(missing, unexpected)


def _check_is_state_dict(module, state):
    name = type(module).__name__
    if not isinstance(state, Mapping):
        raise StateDictError(f"{name}.load_state_dict expects a dict of arrays keyed by parameter names "
                             f"(as {name}.state_dict() returns), not a {type(state).__name__}")
    if {"state", "param_groups"} <= set(state) or (state and all(str(key).startswith(("state/", "group/"))
                                                                    for key in state)):
        raise StateDictError(f"this is an optimizer's state, not a Module's: load it with "
                             f"optimizer.load_state_dict(...) or optimizer.load(path), and the model "
                             f"with {name}.load(path) of the file model.save(path) wrote")
    wrong = [key for key in state if not isinstance(key, str)]
    if wrong:
        raise StateDictError(f"the keys of a state dict are parameter names such as 'fc1.weight', "
                             f"not {wrong[0]!r}")


def _as_array(value):
    """``value`` as a numeric array, or None when it is not one (a ragged list, a dict, text)."""
    try:
        array = np.asarray(value)
    except (ValueError, TypeError):
        return None
    return array if array.dtype != object else None


def read_archive(path, error_class, written_by):
    """``{key: array}`` of the ``.npz`` archive at ``path`` (never unpickling). A file that is not
    such an archive raises ``error_class`` saying so; ``written_by`` names what writes them."""
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise ValueError("it holds a single array (an .npy file)")
        with archive:
            return {key: archive[key] for key in archive.files}
    except OSError as error:  # a file that is missing or unreadable: Python's own error says so
        if not _about_content(error):
            raise
        reason = error
    except (ValueError, EOFError, zipfile.BadZipFile, zlib.error, KeyError) as error:
        reason = error
    raise error_class(f"{path} is not a state file written by {written_by} (an .npz archive): "
                      f"{_reason(reason)}")


def _about_content(error):
    text = str(error)
    return "pickle" in text or "interpret file" in text


def _reason(error):
    text = str(error)
    if _about_content(error):
        return ("numpy cannot read it without unpickling, which adcompile never does (allow_pickle=False): "
                "it holds Python objects, or is another format, or is damaged")
    return text or type(error).__name__


def save(module, path):
    """Write the state dict to ``path`` (an ``.npz`` archive)."""
    arrays = state_dict(module)
    with open(path, "wb") as file:
        np.savez(file, **arrays)


def load(module, path, strict=True):
    """Load a state dict written by ``save`` (never unpickling)."""
    state = read_archive(path, StateFileError, f"{type(module).__name__}.save(path)")
    return load_state_dict(module, state, strict)
