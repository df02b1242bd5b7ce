"""Compiled update programs: the source of one function that updates many parameters.

For the parameters being updated, the program calls the optimizer's update function once per
parameter (adcompile inlines the calls, so the whole update is one compiled function):

    def sgd_step(fc1_weight, fc1_weight_grad, fc1_weight_momentum_buffer, fc1_weight_step, ...,
                 group0):
        sgd_update(fc1_weight, fc1_weight_grad, fc1_weight_momentum_buffer, fc1_weight_step,
                   group0, False, False)
        ...

``training.py`` puts the same calls after a gradient computation (``train_step``) and inside
a loop over minibatches (``fit``). The source is registered with ``linecache`` under a
``<adcompile ...>`` name, so that adcompile (and ``inspect``) can read it like a file, and it
is compiled like any user function; programs with the same text share one compiled function.
"""
import hashlib
import linecache
import threading

import numpy as np

from ..api.compiled import compile as compile_function
from ..backend.names import safe_name

_lock = threading.Lock()
_programs = {}


class UpdatePlan:
    """Which parameters an optimizer updates, under which names, with which state."""

    def __init__(self, optimizer, entries, names):
        self.optimizer = optimizer
        self.entries = entries  # (Parameter, group index)
        self.names = names      # an identifier per entry

    def state_arguments(self):
        """The names of the state arrays of every entry, in argument order."""
        args = []
        for name in self.names:
            args += [f"{name}_{state}" for state in self.optimizer.state_names] + [f"{name}_step"]
        return args

    def state_values(self):
        optimizer = self.optimizer
        values = []
        for param, k in self.entries:
            state = optimizer.state_of(param, optimizer.param_groups[k])
            values += [state[name] for name in optimizer.state_names] + [state["step"]]
        return values

    def group_arguments(self):
        return [f"group{k}" for k in range(len(self.optimizer.param_groups))]

    def update_lines(self, grad_names, indent="    "):
        optimizer = self.optimizer
        update = _update_name(optimizer)
        lines = []
        for name, grad, (_, k) in zip(self.names, grad_names, self.entries):
            flags = ", ".join(str(flag) for flag in optimizer.flags(optimizer.param_groups[k]))
            states = ", ".join([f"{name}_{state}" for state in optimizer.state_names] + [f"{name}_step"])
            lines.append(f"{indent}{update}({name}, {grad}, {states}, group{k}, {flags})")
        return lines

    def namespace(self):
        return {"np": np, _update_name(self.optimizer): self.optimizer.update}


def _update_name(optimizer):
    """The name the generated step calls the optimizer's update by (a safe identifier)."""
    return safe_name(optimizer.update.__name__)


def compiled_program(name, lines, namespace, backend):
    """Compile the function whose source is ``lines`` (cached by its text)."""
    source = "\n".join(lines) + "\n"
    key = (source, backend, tuple(sorted((k, id(v)) for k, v in namespace.items())))
    with _lock:
        program = _programs.get(key)
        if program is None:
            digest = hashlib.sha256(source.encode()).hexdigest()[:12]
            filename = f"<adcompile {name} {digest}>"
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            scope = dict(namespace, __name__="adcompile.training.loops")
            exec(compile(source, filename, "exec"), scope)
            program = _programs[key] = compile_function(scope[name], backend=backend)
    return program


def optimizer_step_program(optimizer, entries):
    """The compiled ``step`` of ``optimizer`` for the parameters in ``entries``."""
    plan = UpdatePlan(optimizer, entries, [f"p{k}" for k in range(len(entries))])
    name = safe_name(type(optimizer).__name__.lower() + "_step")  # names a function and its file
    params = []
    for param_name, state_args in zip(plan.names, _chunks(plan.state_arguments(), len(optimizer.state_names) + 1)):
        params += [param_name, f"{param_name}_grad"] + state_args
    params += plan.group_arguments()
    lines = [f"def {name}({', '.join(params)}):"]
    lines += plan.update_lines([f"{n}_grad" for n in plan.names])
    lines.append("    return 0.0")
    return compiled_program(name, lines, plan.namespace(), optimizer.backend)


def _chunks(items, size):
    return [items[k:k + size] for k in range(0, len(items), size)]
