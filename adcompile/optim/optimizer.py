"""The base of the optimizers: parameter groups, per-parameter state, ``step``, state dicts.

Each optimizer supplies one update function for one parameter (ordinary numpy code, e.g.
``sgd.sgd_update``), which numbers it reads from its group at run time (``hyper_values``:
the learning rate and friends, so a scheduler changing ``lr`` does not recompile) and which
switches it reads at compile time (``flag_names``: ``nesterov``, ``amsgrad``). ``step()`` runs
one compiled program that updates every parameter that has a gradient
(``optim/programs.py``); ``adcompile.train_step`` and ``adcompile.fit`` put the same update
code after the gradient computation in one compiled function.
"""
import numpy as np

from ..boundary import api_boundary
from ..modules.parameter import Parameter
from .errors import OptimizerError, OptimizerStateError
from .hyperparameters import FLAG, NON_NEGATIVE, check_hyperparameters
from .programs import optimizer_step_program
from .saving import load_optimizer, restored_state, save_optimizer

__all__ = ["Optimizer", "OptimizerError", "OptimizerStateError"]


class Optimizer:
    update = None           # update(param, grad, *state arrays, step, hyper, *flags)
    state_names = ()        # the per-parameter state arrays, in the update's order
    flag_names = ()         # compile-time switches of a group (passed to update as constants)
    backend = "numba"       # how the update programs run ("python": the generated Python)
    hyper_rules = {"lr": NON_NEGATIVE}  # what each option must be (``hyperparameters.py``)

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.state = {}
        self.param_groups = []
        if isinstance(params, Parameter):
            raise OptimizerError("params must be an iterable of Parameters or of dicts (param groups), "
                                 "not a single Parameter")
        groups = list(params)
        if not groups:
            raise OptimizerError(f"{type(self).__name__} got an empty parameter list (did you pass "
                                 "model.parameters() of a model without parameters, or an exhausted iterator?)")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group):
        if not isinstance(group, dict) or "params" not in group:
            raise OptimizerError("a param group is a dict with a 'params' entry")
        params = group["params"]
        params = [params] if isinstance(params, Parameter) else list(params)
        for param in params:
            if not isinstance(param, Parameter):
                raise OptimizerError(f"{type(self).__name__} can only optimize adcompile.Parameters, "
                                     f"not {type(param).__name__}")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params) or len({id(p) for p in params}) != len(params):
            raise OptimizerError("some parameters appear in more than one parameter group")
        if not params:
            raise OptimizerError(f"{type(self).__name__} got a parameter group without parameters")
        unknown = set(group) - set(self.defaults) - {"params", "initial_lr"}
        if unknown:
            raise OptimizerError(f"unknown option(s) {sorted(unknown)} for {type(self).__name__}")
        full = dict(self.defaults)
        full.update(group)
        full["params"] = params
        self.check_group(full)
        self.param_groups.append(full)

    def check_group(self, group):
        """Raise ``OptimizerError`` if an option of ``group`` is not what the update can use."""
        rules = {**self.hyper_rules, **dict.fromkeys(self.flag_names, FLAG)}
        check_hyperparameters(type(self).__name__, group, rules)

    # ---------------------------------------------------------------- state
    def hyper_values(self, group):
        raise NotImplementedError

    def initial_state(self, param, group):
        """Fresh state arrays for ``param``: the step count and ``state_names``."""
        state = {"step": np.zeros(1)}
        for name in self.state_names:
            state[name] = np.zeros_like(param.data)
        return state

    def state_of(self, param, group):
        state = self.state.get(param)
        if state is None:
            state = self.state[param] = self.initial_state(param, group)
        return state

    def zero_grad(self, set_to_none=True):
        for group in self.param_groups:
            for param in group["params"]:
                if set_to_none:
                    param.grad = None
                elif param.grad is not None:
                    param.grad[...] = 0

    # ---------------------------------------------------------------- step
    @api_boundary
    def step(self, closure=None):
        """Update every parameter that has a gradient, in one compiled call."""
        loss = closure() if closure is not None else None
        entries = [(param, k) for k, group in enumerate(self.param_groups) for param in group["params"]
                   if param.grad is not None]
        if not entries:
            return loss
        for param, _ in entries:
            grad = np.asarray(param.grad)
            if grad.shape != param.data.shape or grad.dtype != param.data.dtype:
                raise OptimizerError(f"a parameter of shape {param.data.shape} ({param.data.dtype}) has a .grad "
                                     f"of shape {grad.shape} ({grad.dtype})")
        program = optimizer_step_program(self, entries)
        args = []
        for param, k in entries:
            state = self.state_of(param, self.param_groups[k])
            args += [param.data, param.grad] + [state[name] for name in self.state_names] + [state["step"]]
        args += self.group_hypers()
        program(*args)
        return loss

    def group_hypers(self):
        try:
            return [np.array(self.hyper_values(group), dtype=np.float64) for group in self.param_groups]
        except (TypeError, ValueError):  # an option set to a non-number after construction
            for group in self.param_groups:
                self.check_group(group)
            raise

    def flags(self, group):
        return tuple(bool(group[name]) for name in self.flag_names)

    # ---------------------------------------------------------------- saving
    def state_dict(self):
        index = {}
        groups = []
        for group in self.param_groups:
            entry = {key: value for key, value in group.items() if key != "params"}
            entry["params"] = []
            for param in group["params"]:
                index[id(param)] = len(index)
                entry["params"].append(index[id(param)])
            groups.append(entry)
        state = {index[id(param)]: {name: np.array(value) for name, value in st.items()}
                 for param, st in self.state.items() if id(param) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore a ``state_dict()``; everything is checked before anything changes."""
        new_state, options = restored_state(self, state_dict)
        for update, group in zip(options, self.param_groups):
            group.update(update)
        self.state = new_state

    def save(self, path):
        """Write ``state_dict()`` to an ``.npz`` archive (numbers as 0-d arrays, never pickled)."""
        save_optimizer(self, path)

    def load(self, path):
        load_optimizer(self, path)

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for k, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {k}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        return "\n".join(lines) + "\n)"
