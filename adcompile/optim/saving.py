"""Optimizer state dicts: checking one before it is restored, and ``.npz`` archives of them.

An archive holds ``state/<i>/<name>`` arrays and ``group/<g>/<option>`` values (tuples such as
Adam's betas as 1-d arrays); loading never unpickles. ``restored_state`` checks a state dict
(from a file or from ``state_dict()``) completely before the optimizer changes: its structure,
each parameter's state arrays (names, shapes) and the groups' options, with the same
hyperparameter rules as construction. What does not fit raises ``OptimizerStateError``.
"""
from collections.abc import Mapping

import numpy as np

from ..modules.state import read_archive
from .errors import OptimizerError, OptimizerStateError
from .lr_scheduler.base import SCHEDULER_GROUP_KEYS


def save_optimizer(optimizer, path):
    state_dict = optimizer.state_dict()
    arrays = {}
    for index, state in state_dict["state"].items():
        for name, value in state.items():
            arrays[f"state/{index}/{name}"] = value
    for k, group in enumerate(state_dict["param_groups"]):
        for key, value in group.items():
            arrays[f"group/{k}/{key}"] = np.asarray(value)
    with open(path, "wb") as file:
        np.savez(file, **arrays)


def _plain(value):
    if value.ndim == 0:
        return value.item()
    return tuple(value.tolist())


def load_optimizer(optimizer, path):
    name = type(optimizer).__name__
    arrays = read_archive(path, OptimizerStateError, f"{name}.save(path)")
    state, groups = {}, {}
    for key, value in arrays.items():
        kind, index, option = (key.split("/", 2) + ["", ""])[:3]
        if kind not in ("state", "group") or not index.isdigit() or not option:
            hint = (f"; it looks like a Module's file: load it with model.load(path)" if "/" not in key else "")
            raise OptimizerStateError(f"{path} is not a state file written by {name}.save(path): it holds "
                                      f"{key!r}, where state/<i>/<name> and group/<g>/<option> entries "
                                      f"were expected{hint}")
        if kind == "state":
            state.setdefault(int(index), {})[option] = value
        else:
            groups.setdefault(int(index), {})[option] = \
                list(value.tolist()) if option == "params" else _plain(value)
    if sorted(groups) != list(range(len(groups))):
        raise OptimizerStateError(f"{path}: the parameter groups saved are numbered {sorted(groups)}, "
                                  f"not 0 to {len(groups) - 1}: the file is damaged")
    try:
        optimizer.load_state_dict({"state": state, "param_groups": [groups[k] for k in sorted(groups)]})
    except OptimizerStateError as error:
        raise OptimizerStateError(f"{path}: {error}") from None


def restored_state(optimizer, state_dict):
    """``(state, group options)`` that loading ``state_dict`` gives ``optimizer``, after checking
    everything; ``OptimizerStateError`` says what does not fit."""
    groups = _saved_groups(optimizer, state_dict)
    saved_states = state_dict["state"]
    if not isinstance(saved_states, Mapping):
        raise OptimizerStateError(f"the 'state' entry is a {type(saved_states).__name__}, not a dict "
                                  f"{{parameter index: {{name: array}}}}")
    options = []
    for k, (saved, group) in enumerate(zip(groups, optimizer.param_groups)):
        update = {key: value for key, value in saved.items() if key != "params"}
        unknown = sorted(set(update) - set(optimizer.defaults) - SCHEDULER_GROUP_KEYS)
        if unknown:
            raise OptimizerStateError(f"the saved parameter group {k} has option(s) {unknown} that "
                                      f"{type(optimizer).__name__} does not take: was it saved by another "
                                      f"optimizer?")
        try:
            optimizer.check_group({**group, **update})
        except OptimizerError as error:
            raise OptimizerStateError(f"the saved parameter group {k}: {error}") from None
        options.append(update)
    new_state = {}
    for saved, group in zip(groups, optimizer.param_groups):
        for saved_index, param in zip(saved["params"], group["params"]):
            if saved_states.get(saved_index) is not None:
                new_state[param] = _parameter_state(optimizer, param, group, saved_index,
                                                    saved_states[saved_index])
    return new_state, options


def _saved_groups(optimizer, state_dict):
    if not isinstance(state_dict, Mapping) or not {"state", "param_groups"} <= set(state_dict):
        found = f"a dict with keys {sorted(map(str, state_dict))[:5]}" if isinstance(state_dict, Mapping) \
            else f"a {type(state_dict).__name__}"
        raise OptimizerStateError(f"an optimizer state dict has 'state' and 'param_groups' entries (as "
                                  f"optimizer.state_dict() returns), not {found}")
    groups = state_dict["param_groups"]
    if not isinstance(groups, (list, tuple)) or not all(isinstance(g, Mapping) and "params" in g
                                                        for g in groups):
        raise OptimizerStateError("'param_groups' of a state dict is a list of dicts, each with 'params'")
    if len(groups) != len(optimizer.param_groups):
        raise OptimizerStateError(f"loaded state dict has {len(groups)} parameter groups, the optimizer "
                                  f"has {len(optimizer.param_groups)}")
    for saved, group in zip(groups, optimizer.param_groups):
        if len(saved["params"]) != len(group["params"]):
            raise OptimizerStateError("loaded state dict contains a parameter group that doesn't match the "
                                      "size of the optimizer's group")
    return groups


def _parameter_state(optimizer, param, group, saved_index, saved):
    if not isinstance(saved, Mapping):
        raise OptimizerStateError(f"the saved state of parameter {saved_index} is a {type(saved).__name__}, "
                                  f"not a dict of arrays")
    entry = {}
    for name, template in optimizer.initial_state(param, group).items():
        if name not in saved:
            raise OptimizerStateError(f"the saved state of parameter {saved_index} has no '{name}' (it has "
                                      f"{sorted(saved)}): was it saved by another optimizer?")
        try:
            value = np.array(saved[name], dtype=template.dtype)
        except (ValueError, TypeError):
            raise OptimizerStateError(f"the saved '{name}' of parameter {saved_index} is not an array of "
                                      f"numbers") from None
        if value.shape != template.shape:
            raise OptimizerStateError(f"the saved '{name}' of parameter {saved_index} has shape "
                                      f"{value.shape}, expected {template.shape}")
        entry[name] = value
    return entry
