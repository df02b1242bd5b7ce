"""Optimizer state dicts as ``.npz`` archives: ``state/<i>/<name>`` arrays and
``group/<g>/<option>`` values (tuples such as Adam's betas as 1-d arrays). Loading never
unpickles."""
import numpy as np


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
    state, groups = {}, {}
    with np.load(path, allow_pickle=False) as archive:
        for key in archive.files:
            kind, index, name = key.split("/", 2)
            if kind == "state":
                state.setdefault(int(index), {})[name] = archive[key]
            else:
                value = archive[key]
                groups.setdefault(int(index), {})[name] = list(value.tolist()) if name == "params" else _plain(value)
    param_groups = [groups[k] for k in sorted(groups)]
    optimizer.load_state_dict({"state": state, "param_groups": param_groups})
