"""Compiling functions of Modules: ``model(x)`` and ``grad(loss_fn)(model, X, y)``.

A function one of whose arguments is a Module (``forward(self, x)``, ``loss_fn(model, X, y)``)
is compiled as a *flat* function whose arguments are the module's parameter and buffer arrays
(in ``named_parameters()`` then ``named_buffers()`` order) in place of the module, followed by
the other arguments. The module tree itself is compile-time information: its classes, its
plain attributes (sizes, flags, strings), ``training`` and which parameters are present make
up ``module_key``, and one flat function is compiled per key (changing such an attribute
compiles again). ``frontend/module_values.py`` translates the attribute reads.

Gradients with respect to a Module argument are dicts keyed like ``named_parameters()``
(parameters with ``requires_grad`` only).
"""
import inspect
import threading
from collections import OrderedDict

import numpy as np

from .api import CompiledFunction, DerivedFunction, _Specialised, as_compiled, signature_of
from .errors import CallError
from .frontend.module_values import ModuleSlot, translate_with_modules
from .ir.types import type_of_value
from .module import Module
from .parameter import Parameter, structure_version

_lock = threading.RLock()
_flat_functions = {}


# ------------------------------------------------------------------ the module tree
def module_leaves(module):
    """(flat name, holder, array) per parameter and buffer: a Parameter is its own holder,
    a buffer array holds itself."""
    leaves = [(flat_name(name), param, param.data) for name, param in module.named_parameters()]
    leaves += [(flat_name(name), buffer, buffer) for name, buffer in module.named_buffers()]
    return leaves


def flat_name(dotted):
    """An identifier for a dotted parameter name: ``fc1.weight`` -> ``fc1_weight``, and the
    numbered children of a Sequential ``0.weight`` -> ``layer0_weight``."""
    parts = [("layer" + part) if part.isdigit() else part for part in dotted.split(".")]
    return "_".join(parts)


def _plain_key(value):
    if value is None or isinstance(value, (bool, int, float, str, np.integer, np.floating)):
        return type(value), value
    if isinstance(value, (tuple, list)):
        return type(value), tuple(_plain_key(v) for v in value)
    return type(value), id(value)  # arrays, functions, other objects: by identity


_REGISTRIES = ("_parameters", "_buffers", "_non_persistent", "_modules", "training")


def module_key(module):
    """Everything compiled code of ``module`` depends on besides array values and shapes."""
    parts = []
    for prefix, sub in module.named_modules():
        params = tuple((n, None if p is None else (p.data.dtype.num, p.data.ndim, p.requires_grad, id(p)))
                       for n, p in sub._parameters.items())
        buffers = tuple((n, None if b is None else (b.dtype.num, b.ndim, id(b))) for n, b in sub._buffers.items())
        children = tuple((n, None if c is None else id(c)) for n, c in sub._modules.items())
        plain = tuple((n, _plain_key(v)) for n, v in sub.__dict__.items()
                      if n not in _REGISTRIES and not n.startswith("_adcompile"))
        parts.append((prefix, type(sub), sub.training, params, buffers, children, plain))
    return tuple(parts)


# ------------------------------------------------------------------ the flat function
class FlatFunction(_Specialised):
    """``pyfunc`` with each Module argument replaced by its parameter and buffer arrays."""

    def __init__(self, pyfunc, modules, backend, label=None):
        super().__init__()
        self.pyfunc = pyfunc
        self.backend = backend
        self.name = label or pyfunc.__name__
        names = list(inspect.signature(pyfunc).parameters)
        self.slots = [ModuleSlot(m, module_leaves(m)) if m is not None else None for m in modules]
        self.param_names = []
        for name, slot in zip(names, self.slots):
            if slot is None:
                self.param_names.append(name)
            else:
                self.param_names += [leaf_name for leaf_name, _, _ in slot.leaves]
        self._ir = {}

    def origin(self):
        return f"{self.pyfunc.__module__}.{self.pyfunc.__qualname__}"

    def check_arity(self, args):
        if len(args) != len(self.param_names):
            raise CallError(f"{self.name}() takes {len(self.param_names)} flat arguments, {len(args)} given")

    def python_function(self):
        return self.pyfunc

    def primal_ir(self, sig):
        if sig not in self._ir:
            with self._lock:
                if sig not in self._ir:
                    self._ir[sig] = translate_with_modules(self.pyfunc, self.slots, sig, self.ir_name())
        return self._ir[sig]

    ir = primal_ir

    def ir_name(self):
        owner = self.pyfunc.__qualname__.split(".")
        return "_".join(owner[-2:]) if len(owner) > 1 else self.pyfunc.__name__

    def user_returns_tuple(self, sig):
        return self.primal_ir(sig).returns_tuple

    def derived(self, kind, wrt):
        """A cached DerivedFunction of this flat function."""
        key = (kind, wrt)
        derived = self.__dict__.setdefault("_derived", {}).get(key)
        if derived is None:
            derived = self._derived[key] = DerivedFunction(self, kind, wrt)
        return derived

    def __repr__(self):
        return f"<adcompile flat {self.name}>"


def flat_function(pyfunc, args, backend):
    """The FlatFunction of ``pyfunc`` for the Modules among ``args`` (by module key)."""
    modules = [a if isinstance(a, Module) else None for a in args]
    key = (pyfunc, backend, tuple(None if m is None else (id(m), module_key(m)) for m in modules))
    with _lock:
        flat = _flat_functions.get(key)
        if flat is None:
            label = pyfunc.__qualname__.replace(".<locals>", "")
            flat = _flat_functions[key] = FlatFunction(pyfunc, modules, backend, label)
    return flat


def flat_arguments(args):
    """The arguments with each Module replaced by its arrays."""
    flat = []
    for value in args:
        if isinstance(value, Module):
            flat += [p.data for _, p in value.named_parameters()]
            flat += [b for _, b in value.named_buffers()]
        else:
            flat.append(value)
    return flat


def _trainable_positions(args):
    """Per argument: for a Module, [(flat index, name)] of its parameters with requires_grad;
    for another argument, its flat index."""
    positions, index = [], 0
    for value in args:
        if isinstance(value, Module):
            entries = []
            for name, param in value.named_parameters():
                if param.requires_grad:
                    entries.append((index, name))
                index += 1
            index += sum(1 for _ in value.named_buffers())
            positions.append(entries)
        else:
            positions.append(index)
            index += 1
    return positions


# ------------------------------------------------------------------ calling a module
class _CallPlan:
    """What ``model(x)`` needs between structure changes: the flat function and the arrays'
    holders, so that a call costs a version check and a list of arrays."""

    def __init__(self, module, backend):
        self.version = structure_version()
        self.backend = backend
        forward = inspect.getattr_static(type(module), "forward", None)
        if forward is None or forward is Module.forward:
            raise NotImplementedError(f"{type(module).__name__} does not define forward(self, ...)")
        self.forward = forward
        self.signature = inspect.signature(forward)
        self.flat = flat_function(forward, [module] + [None] * (len(self.signature.parameters) - 1), backend)
        self.params = [p for _, p in module.named_parameters()]
        self.buffers = [b for _, b in module.named_buffers()]
        from .nn.dropout import step_counters
        self.counters = [counter for _, counter in step_counters(module)]


def module_backend(module):
    return module.__dict__.get("_adcompile_backend", "numba")


def call_module(module, args, kwargs):
    """``model(*args, **kwargs)``: the compiled forward."""
    plan = module.__dict__.get("_adcompile_plan")
    if plan is None or plan.version != structure_version():
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


# ------------------------------------------------------------------ derivatives
def has_module(args):
    return any(isinstance(a, Module) for a in args)


def regroup(positions, wrt, grads):
    """The gradients in the user's terms: a dict for a Module argument, an array otherwise."""
    grads = iter(grads)
    out = []
    for k in wrt:
        entry = positions[k]
        if isinstance(entry, list):
            out.append(OrderedDict((name, next(grads)) for _, name in entry))
        else:
            out.append(next(grads))
    return out


def flat_wrt(positions, wrt, fname):
    indices = []
    for k in wrt:
        entry = positions[k]
        if isinstance(entry, list):
            if not entry:
                raise CallError(f"{fname}: the Module argument {k} has no parameter with requires_grad=True")
            indices += [index for index, _ in entry]
        else:
            indices.append(entry)
    return tuple(indices)


def _user_wrt(fn, args):
    if fn.wrt is not None:
        return list(fn.wrt)
    return [k for k, a in enumerate(args)
            if isinstance(a, Module) or (type_of_value(a) is not None and type_of_value(a).is_float)]


def run_with_modules(fn, args, extra=()):
    """Call the compiled or derived function ``fn`` on arguments that include Modules."""
    if isinstance(fn, CompiledFunction):
        flat = flat_function(fn.pyfunc, args, fn.backend)
        return flat.run(flat_arguments(args), extra)
    if (isinstance(fn, DerivedFunction) and fn.kind in ("grad", "value_and_grad")
            and isinstance(fn.base, CompiledFunction)):
        fn.base.check_arity(args)
        flat = flat_function(fn.base.pyfunc, args, fn.backend)
        positions = _trainable_positions(args)
        wrt = _user_wrt(fn, args)
        derived = flat.derived(fn.kind, flat_wrt(positions, wrt, fn.name))
        result = derived.run(flat_arguments(args))
        value, grads = (None, result) if fn.kind == "grad" else result
        grads = grads if isinstance(grads, tuple) else (grads,)
        grouped = regroup(positions, wrt, grads)
        grouped = tuple(grouped) if fn.wrt_is_tuple else grouped[0]
        return grouped if fn.kind == "grad" else (value, grouped)
    raise CallError(f"{fn.name}: Module arguments are supported by compile, grad, value_and_grad and hvp")


def hvp_with_modules(f, primals, tangents):
    """``hvp`` where some primals are Modules: their tangents are dicts keyed like
    ``named_parameters()`` (a missing key: that parameter is not differentiated)."""
    from .derivatives import hvp
    compiled = as_compiled(f)
    if not isinstance(compiled, CompiledFunction):
        raise CallError("hvp with Module arguments takes a plain or compiled function")
    flat = flat_function(compiled.pyfunc, primals, compiled.backend)
    positions = _trainable_positions(primals)
    flat_tangents = []
    wrt = []
    for k, (value, tangent) in enumerate(zip(primals, tangents)):
        if isinstance(value, Module):
            tangent = tangent or {}
            trainable = {name for _, name in positions[k]}
            unknown = set(tangent) - trainable
            if unknown:
                raise CallError(f"hvp: tangent keys {sorted(unknown)} are not parameters with requires_grad "
                                f"of the Module argument {k}")
            for name, _ in value.named_parameters():
                flat_tangents.append(tangent.get(name))
            flat_tangents += [None] * sum(1 for _ in value.named_buffers())
            if tangent:
                wrt.append(k)
        else:
            flat_tangents.append(tangent)
            if tangent is not None:
                wrt.append(k)
    result = hvp(flat, tuple(flat_arguments(primals)), tuple(flat_tangents))
    result = result if isinstance(result, tuple) else (result,)
    differentiated = iter(result)
    out = []
    for k in wrt:
        if isinstance(primals[k], Module):
            names = [name for name, _ in primals[k].named_parameters() if name in tangents[k]]
            out.append(OrderedDict((name, next(differentiated)) for name in names))
        else:
            out.append(next(differentiated))
    return out[0] if len(out) == 1 else tuple(out)


__all__ = ["call_module", "run_with_modules", "hvp_with_modules", "flat_function", "flat_arguments",
           "module_key", "signature_of"]
