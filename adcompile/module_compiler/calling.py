"""``model(x)``: a Module's compiled ``forward``, planned once per structure change so that a call
costs a version check and a list of arrays."""
import inspect

from ..errors import CallError
from ..modules.module import Module
from ..modules.parameter import Parameter
from ..modules.step_counters import step_counters
from .flat_functions import flat_function
from .tree_keys import TreeStamp


class _CallPlan:
    """What ``model(x)`` needs between structure changes: the flat function and the arrays'
    holders, so that a call costs a version check and a list of arrays."""

    def __init__(self, module, backend):
        self.stamp = TreeStamp(module)
        self.backend = backend
        forward = inspect.getattr_static(type(module), "forward", None)
        if forward is None or forward is Module.forward:
            raise NotImplementedError(f"{type(module).__name__} does not define forward(self, ...)")
        self.forward = forward
        self.signature = inspect.signature(forward)
        self.flat = flat_function(forward, [module] + [None] * (len(self.signature.parameters) - 1), backend)
        self.params = [p for _, p in module.named_parameters()]
        self.buffers = [b for _, b in module.named_buffers()]
        self.counters = [counter for _, counter in step_counters(module)]


def module_backend(module):
    return module.__dict__.get("_adcompile_backend", "numba")


def call_module(module, args, kwargs):
    """``model(*args, **kwargs)``: the compiled forward."""
    plan = module.__dict__.get("_adcompile_plan")
    if plan is None or not plan.stamp.current(module):
        plan = _CallPlan(module, module_backend(module))
        object.__setattr__(module, "_adcompile_plan", plan)
    if kwargs or len(args) != len(plan.signature.parameters) - 1:
        try:
            bound = plan.signature.bind(module, *args, **kwargs)
        except TypeError as error:
            raise CallError(f"{type(module).__name__}.forward: {error}") from None
        bound.apply_defaults()
        args = bound.args[1:]
    if any(isinstance(a, (Module, Parameter)) for a in args):
        args = [a.data if isinstance(a, Parameter) else a for a in args]
    result = plan.flat.run([p._data for p in plan.params] + plan.buffers + list(args))
    for counter in plan.counters:  # random streams (Dropout) advance after a training-mode call
        counter += 1
    return result
