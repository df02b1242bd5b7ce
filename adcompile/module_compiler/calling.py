"""``model(x)``: a Module's compiled ``forward``, planned once per structure change so that a call
costs a version check and a list of arrays."""
import inspect
import weakref

from ..errors import CallError
from ..modules.module import Module
from ..modules.parameter import Parameter
from ..modules.step_counters import step_counters
from .flat_functions import flat_function
from .tree_keys import TreeStamp
from ..tree import flatten, is_container
from .tree_slots import TreeSlot


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
        self.module = weakref.ref(module)
        self.flats = {}  # per tree structure of the arguments (lstm(x, (h0, c0))): the flat function
        self.flat = self.flat_for(())
        self.params = [p for _, p in module.named_parameters()]
        self.buffers = [b for _, b in module.named_buffers()]
        self.counters = [counter for _, counter in step_counters(module)]

    def flat_for(self, trees):
        """The flat function for arguments that are pytrees: ``trees`` ((position, argument)...)."""
        key = tuple((position, flatten(value)[1]) for position, value in trees)
        flat = self.flats.get(key)
        if flat is None:
            names = list(self.signature.parameters)[1:]
            structure = [None] * len(names)
            for position, value in trees:
                structure[position] = TreeSlot.of(value, names[position], f"{type(self.module()).__name__}.forward")
            flat = self.flats[key] = flat_function(self.forward, [self.module()] + structure, self.backend)
        return flat


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
    flat = plan.flat
    if any(is_container(a) for a in args):  # lstm(x, (h0, c0)): one flat argument per leaf
        flat = plan.flat_for(tuple((k, a) for k, a in enumerate(args) if is_container(a)))
        args = [leaf for a in args for leaf in (flatten(a)[0] if is_container(a) else (a,))]
    result = flat.run([p._data for p in plan.params] + plan.buffers + list(args))  # (output, (h_n, c_n)) regrouped
    for counter in plan.counters:  # random streams (Dropout) advance after a training-mode call
        counter += 1
    return result
