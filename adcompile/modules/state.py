"""Saving and restoring a Module: ``state_dict``, ``load_state_dict`` and ``.npz`` files.

``state_dict`` maps dotted names (``fc1.weight``) to copies of the parameter and persistent
buffer arrays. ``load_state_dict`` checks every key, shape and dtype before it writes
anything, so a failing load leaves the module as it was. Files are plain ``.npz`` archives
read with ``allow_pickle=False``: loading a checkpoint never unpickles.
"""
from collections import OrderedDict, namedtuple

import numpy as np

from ..errors import AdCompileError

IncompatibleKeys = namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


class StateDictError(AdCompileError, RuntimeError):
    """A state dict that does not fit the module (PyTorch raises a RuntimeError)."""


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
        value = np.asarray(state[key])
        if value.shape != target.shape:
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


def save(module, path):
    """Write the state dict to ``path`` (an ``.npz`` archive)."""
    arrays = state_dict(module)
    with open(path, "wb") as file:
        np.savez(file, **arrays)


def load(module, path, strict=True):
    """Load a state dict written by ``save`` (never unpickling)."""
    with np.load(path, allow_pickle=False) as archive:
        state = {key: archive[key] for key in archive.files}
    return load_state_dict(module, state, strict)
