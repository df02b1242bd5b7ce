"""Compiling functions of Modules: ``model(x)`` and ``grad(loss_fn)(model, X, y)``.

A function one of whose arguments is a Module (``forward(self, x)``, ``loss_fn(model, X, y)``)
is compiled as a *flat* function whose arguments are the module's parameter and buffer arrays
(in ``named_parameters()`` then ``named_buffers()`` order) in place of the module, followed by
the other arguments. The module tree itself is compile-time information: its classes, its
plain attributes (sizes, flags, strings), ``training`` and which parameters are present make
up ``module_key``, and one flat function is compiled per key (changing such an attribute
compiles again). ``module_values.py`` translates the attribute reads.

The API below this module (``model(x)`` in ``module.py``, calls of compiled and derived
functions, ``jvp``, ``hvp``, ``vjp``, and ``adcompile.source`` with example arguments) hands
calls with Module arguments to the entry points this module registers in ``module_dispatch.py``.

Gradients with respect to a Module argument are dicts keyed like ``named_parameters()``
(parameters with ``requires_grad`` only).

A buffer that the compiled code writes into in place (BatchNorm's running statistics) is
state: every function compiled for the module, its derivatives included, writes into the
module's own array (``transforms/arguments.py``), so ``backward``, ``train_step`` and ``fit``
update it as ``model(x)`` does.
"""
import inspect
import threading
import weakref
from collections import OrderedDict

import numpy as np

from ..backend.names import safe_name
from ..api.functions import CompiledFunction, DerivedFunction, _check_against, _Specialised, as_compiled, signature_of
from ..derivatives.forward import _tangent_like, _unit_tensors
from ..errors import CallError
from ..modules.dispatch import ModuleCompiler, register_module_compiler
from ..modules.leaves import module_leaves
from .values import ModuleSlot, TupleSlot, translate_with_modules
from ..frontend.values import regroup_results
from ..ir.types import type_of_value
from ..modules.module import Module, tree_version
from ..modules.parameter import Parameter
from ..modules.step_counters import step_counters
from ..transforms.arguments import written_arguments

_lock = threading.RLock()
_flat_functions = {}


# ------------------------------------------------------------------ the module tree
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
        self.slots = [ModuleSlot(m, module_leaves(m)) if isinstance(m, Module) else
                      m if isinstance(m, TupleSlot) else None for m in modules]
        self.param_names = []
        self.buffer_positions = set()  # flat positions of the modules' buffers
        for name, slot in zip(names, self.slots):
            if slot is None:
                self.param_names.append(name)
            elif isinstance(slot, TupleSlot):
                self.param_names += slot.names(name)
            else:
                start = len(self.param_names)
                self.buffer_positions |= {start + k for k in slot.buffer_indices}
                self.param_names += slot.leaf_names
        self._ir = {}
        self.result_structure = None  # the nested tuple the function returns flat, if it does

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
                    fn = translate_with_modules(self.pyfunc, self.slots, sig, self.ir_name())
                    self.result_structure = getattr(fn, "result_structure", None)
                    buffers = {param for k, param in enumerate(fn.params) if k in self.buffer_positions}
                    state = [param for param in written_arguments(fn) if param in buffers]
                    if state:  # buffers written in place: their writes reach the module's arrays
                        fn.state_params = state
                    self._ir[sig] = fn
        return self._ir[sig]

    ir = primal_ir

    def ir_name(self):
        """The generated function's name: ``Owner_method`` or the name, made safe (backend/names.py)."""
        owner = [part for part in self.pyfunc.__qualname__.split(".") if part != "<locals>"]
        return safe_name("_".join(owner[-2:]) if len(owner) > 1 else self.pyfunc.__name__)

    def user_returns_tuple(self, sig):
        return self.primal_ir(sig).returns_tuple

    def derived(self, kind, wrt):
        """A cached DerivedFunction of this flat function."""
        return self.chain(((kind, wrt, False),))

    def chain(self, spec):
        """A cached chain of transforms of this flat function: ``spec`` lists (kind, flat wrt,
        tangents_only) from the innermost transform out, e.g. (("grad", 2, False), ("jvp",
        2, True)) is a column of the Hessian with respect to flat argument 2."""
        cache = self.__dict__.setdefault("_derived", {})
        derived = cache.get(spec)
        if derived is None:
            with self._lock:
                fn = self
                for k, (kind, wrt, tangents_only) in enumerate(spec):
                    key = spec[:k + 1]
                    if key not in cache:
                        cache[key] = DerivedFunction(fn, kind, wrt, tangents_only=tangents_only)
                    fn = cache[key]
                derived = fn
        return derived

    def __repr__(self):
        return f"<adcompile flat {self.name}>"


def flat_function(pyfunc, args, backend):
    """The FlatFunction of ``pyfunc`` for the Modules among ``args`` (by module key; a TupleSlot
    in ``args`` stands for a tuple argument of its size). The cache holds no model: a
    FlatFunction refers to its modules weakly, and a module's entries are dropped when it is
    collected (so ids in keys always belong to live modules)."""
    modules = [a if isinstance(a, (Module, TupleSlot)) else None for a in args]
    key = (pyfunc, backend, tuple((id(m), module_key(m)) if isinstance(m, Module) else
                                  ("tuple", m.size) if isinstance(m, TupleSlot) else None for m in modules))
    with _lock:
        flat = _flat_functions.get(key)
        if flat is None:
            label = pyfunc.__qualname__.replace(".<locals>", "")
            flat = _flat_functions[key] = FlatFunction(pyfunc, modules, backend, label)
            for module in modules:
                if isinstance(module, Module) and "_adcompile_finalizer" not in module.__dict__:
                    module.__dict__["_adcompile_finalizer"] = weakref.finalize(module, _forget_module, id(module))
    return flat


def _forget_module(module_id):
    """A module was collected: drop the flat functions compiled for it."""
    with _lock:
        for key in [k for k in _flat_functions if any(e is not None and e[0] == module_id for e in k[2])]:
            del _flat_functions[key]


def _holds_list(value):
    if isinstance(value, list):
        return True
    return isinstance(value, tuple) and any(_holds_list(v) for v in value)


class TreeStamp:
    """Whether a module tree is still as it was when something was compiled for it: its
    version (``module.touch`` gives the module and its holders a new one on every assignment,
    registration, train/eval, dtype or requires_grad change), one comparison per call. A list
    attribute can change in place without an assignment, so a tree holding one is compared
    by its full ``module_key`` as well."""

    def __init__(self, module):
        self.version = tree_version(module)
        lists = any(_holds_list(v) for sub in module.modules() for n, v in sub.__dict__.items()
                    if n not in _REGISTRIES and not n.startswith("_adcompile"))
        self.key = module_key(module) if lists else None

    def current(self, module):
        return self.version == tree_version(module) and (self.key is None or self.key == module_key(module))


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
        self.stamp = TreeStamp(module)
        self.backend = backend
        forward = inspect.getattr_static(type(module), "forward", None)
        if forward is None or forward is Module.forward:
            raise NotImplementedError(f"{type(module).__name__} does not define forward(self, ...)")
        self.forward = forward
        self.signature = inspect.signature(forward)
        self.module = weakref.ref(module)
        self.flats = {}  # per tuple structure of the arguments: the flat function
        self.flat = self.flat_for(())
        self.params = [p for _, p in module.named_parameters()]
        self.buffers = [b for _, b in module.named_buffers()]
        self.counters = [counter for _, counter in step_counters(module)]

    def flat_for(self, tuple_sizes):
        """The flat function for arguments whose tuples have ``tuple_sizes`` ((position, size)...)."""
        flat = self.flats.get(tuple_sizes)
        if flat is None:
            structure = [None] * (len(self.signature.parameters) - 1)
            for position, size in tuple_sizes:
                structure[position] = TupleSlot(size)
            flat = self.flats[tuple_sizes] = flat_function(self.forward, [self.module()] + structure, self.backend)
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
    if any(isinstance(a, tuple) for a in args):  # lstm(x, (h0, c0)): one flat argument per item
        flat = plan.flat_for(tuple((k, len(a)) for k, a in enumerate(args) if isinstance(a, tuple)))
        args = [item for a in args for item in (a if isinstance(a, tuple) else (a,))]
    result = flat.run([p._data for p in plan.params] + plan.buffers + list(args))
    if flat.result_structure is not None:  # (output, (h_n, c_n)): the compiled function returns it flat
        result = regroup_results(flat.result_structure, result)
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


def _composition_error(level, k):
    return CallError(
        f"{level.name}: a {level.kind} with respect to the Module argument {k} inside another derivative is "
        "not supported (its result is a dict of arrays, not one array); for second derivatives with respect "
        f"to a model's parameters use adcompile.hessian(f, wrt={k}) (a dict of dicts) or adcompile.hvp(f, "
        "primals, tangents) with a tangent dict, and for derivatives of a non-scalar output "
        f"adcompile.jacobian(f, wrt={k}) or adcompile.vjp")


def _flat_chain(fn, args, positions):
    """The transforms of ``fn`` (a derived function of a compiled function) applied to the flat
    function of ``args``: (flat derived function, the user's wrt if its outermost transform is
    a gradient with respect to a Module, whose result must be regrouped into dicts, else None)."""
    levels = []
    while isinstance(fn, DerivedFunction):
        levels.append(fn)
        fn = fn.base
    if not isinstance(fn, CompiledFunction):
        raise CallError(f"{levels[-1].name if levels else fn!r}: Module arguments are supported by "
                        "functions built from a plain or compiled Python function")
    flat = flat_function(fn.pyfunc, args, fn.backend)
    spec, grouped = [], None
    for depth, level in enumerate(reversed(levels)):
        wrt = _user_wrt(level, args)
        modules = [k for k in wrt if isinstance(positions[k], list)]
        if modules:
            if depth != len(levels) - 1 or level.kind not in ("grad", "value_and_grad"):
                raise _composition_error(level, modules[0])
            spec.append((level.kind, flat_wrt(positions, wrt, level.name), level.tangents_only))
            grouped = wrt
        else:
            indices = tuple(positions[k] for k in wrt)
            spec.append((level.kind, indices if level.wrt_is_tuple else indices[0], level.tangents_only))
    return flat.chain(tuple(spec)), grouped


def run_with_modules(fn, args, extra=()):
    """Call the compiled or derived function ``fn`` on arguments that include Modules: the same
    transforms of the flat function, gradients with respect to a Module regrouped into dicts."""
    if isinstance(fn, CompiledFunction):
        flat = flat_function(fn.pyfunc, args, fn.backend)
        return flat.run(flat_arguments(args), extra)
    if not isinstance(fn, DerivedFunction):
        raise CallError(f"{fn.name}: Module arguments are supported by compile, grad, value_and_grad, vjp, jvp, "
                        "hvp, jacobian and hessian")
    fn.check_arity(args)
    positions = _trainable_positions(args)
    derived, wrt = _flat_chain(fn, args, positions)
    result = derived.run(flat_arguments(args), extra)
    if wrt is None:
        return result
    value, grads = (None, result) if fn.kind == "grad" else result
    grads = grads if isinstance(grads, tuple) else (grads,)
    grouped = regroup(positions, wrt, grads)
    grouped = tuple(grouped) if fn.wrt_is_tuple else grouped[0]
    return grouped if fn.kind == "grad" else (value, grouped)


def _plain_compiled(f, what):
    compiled = as_compiled(f)
    if not isinstance(compiled, CompiledFunction):
        raise CallError(f"{what} with Module arguments takes a plain or compiled Python function, not "
                        f"{compiled!r}; with respect to a Module, take {what} of the function itself "
                        "(adcompile.hessian(f, wrt=k) is the second derivative)")
    return compiled


def _flat_tangents(what, primals, tangents, positions):
    """Tangents of the flat arguments from the user's (a dict keyed like named_parameters()
    for a Module, a missing key meaning that parameter is not differentiated), and the user
    indices that have a tangent."""
    if len(primals) != len(tangents):
        raise CallError(f"{what}: {len(primals)} primals but {len(tangents)} tangents (use None for "
                        "arguments that are not differentiated)")
    flat_tangents, wrt = [], []
    for k, (value, tangent) in enumerate(zip(primals, tangents)):
        if isinstance(value, Module):
            tangent = {} if tangent is None else tangent
            if not isinstance(tangent, dict):
                raise CallError(f"{what}: the tangent of the Module argument {k} must be a dict keyed like "
                                f"named_parameters(), not {type(tangent).__name__}")
            trainable = {name for _, name in positions[k]}
            unknown = set(tangent) - trainable
            if unknown:
                raise CallError(f"{what}: tangent keys {sorted(unknown)} are not parameters with requires_grad "
                                f"of the Module argument {k}")
            for name, param in value.named_parameters():
                flat_tangents.append(None if name not in tangent else _tangent_like(tangent[name], param.data, name))
            flat_tangents += [None] * sum(1 for _ in value.named_buffers())
            if tangent:
                wrt.append(k)
        else:
            flat_tangents.append(tangent if tangent is None else _tangent_like(tangent, value, f"argument {k}"))
            if tangent is not None:
                wrt.append(k)
    return flat_tangents, wrt


def _tangent_spec(flat_tangents):
    indices = tuple(k for k, t in enumerate(flat_tangents) if t is not None)
    return indices, tuple(flat_tangents[k] for k in indices)


def jvp_with_modules(f, primals, tangents):
    """``jvp`` where some primals are Modules (their tangents dicts keyed like
    ``named_parameters()``): ``(f(*primals), J @ tangents)``."""
    compiled = as_compiled(f)
    positions = _trainable_positions(primals)
    flat_tangents, wrt = _flat_tangents("jvp", primals, tangents, positions)
    indices, extra = _tangent_spec(flat_tangents)
    if not indices:
        raise CallError("jvp: every tangent is None (or an empty dict): nothing to differentiate")
    if isinstance(compiled, CompiledFunction):
        flat = flat_function(compiled.pyfunc, primals, compiled.backend)
        args = flat_arguments(primals)
        result = flat.chain((("jvp", indices, False),)).call_with_extra(args, extra)
        returns_tuple = flat.user_returns_tuple(flat.signature(args))
    else:  # jvp of a derived function: the same transforms of the flat function
        modules = [k for k in wrt if isinstance(primals[k], Module)]
        if modules:
            raise _composition_error(DerivedFunction(compiled, "jvp", tuple(wrt)), modules[0])
        result = run_with_modules(DerivedFunction(compiled, "jvp", tuple(wrt)), primals, extra)
        returns_tuple = compiled.user_returns_tuple(None)
    n_out = len(result) // 2
    outs, touts = tuple(result[:n_out]), tuple(result[n_out:])
    if returns_tuple:
        return outs, touts
    return outs[0], touts[0]


def hvp_with_modules(f, primals, tangents):
    """``hvp`` where some primals are Modules: their tangents are dicts keyed like
    ``named_parameters()`` (a missing key: that parameter is not differentiated), and so are
    their parts of H @ v."""
    compiled = _plain_compiled(f, "hvp")
    positions = _trainable_positions(primals)
    flat_tangents, wrt = _flat_tangents("hvp", primals, tangents, positions)
    indices, extra = _tangent_spec(flat_tangents)
    if not indices:
        raise CallError("hvp: every tangent is None (or an empty dict): nothing to differentiate")
    flat = flat_function(compiled.pyfunc, primals, compiled.backend)
    column = flat.chain((("grad", indices, False), ("jvp", indices, True)))
    result = column.call_with_extra(flat_arguments(primals), extra)
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


def vjp_with_modules(f, args, wrt=None):
    """``vjp`` where some arguments are Modules: ``(out, pullback)``; ``pullback(cotangent)``
    returns the tuple of gradients, a dict keyed like ``named_parameters()`` for a Module."""
    compiled = _plain_compiled(f, "vjp")
    compiled.check_arity(args)
    user = DerivedFunction(compiled, "vjp", wrt)  # normalises wrt (names, negative indices)
    positions = _trainable_positions(args)
    wrt = _user_wrt(user, args)
    flat = flat_function(compiled.pyfunc, args, compiled.backend)
    derived = flat.chain((("vjp", flat_wrt(positions, wrt, user.name), False),))
    flat_args = flat_arguments(args)
    out = flat.run(flat_args)

    def pullback(*cotangents):
        if len(cotangents) == 1 and isinstance(cotangents[0], tuple):
            cotangents = cotangents[0]
        cotangents = tuple(np.asarray(c, dtype=float) if isinstance(c, list) else c for c in cotangents)
        cotangents = tuple(c[()] if isinstance(c, np.ndarray) and c.ndim == 0 else c for c in cotangents)
        _check_against(cotangents, flat.ir(flat.signature(flat_args)).results, "cotangent")
        result = derived.call_with_extra(flat_args, cotangents)
        return tuple(regroup(positions, wrt, tuple(result[len(cotangents):])))

    pullback.derived = derived
    return out, pullback


def _leaves_of(args, index, what):
    """[(flat index, name)] of the trainable parameters of the Module argument ``index``."""
    entries = _trainable_positions(args)[index]
    if not entries:
        raise CallError(f"{what}: the Module argument {index} has no parameter with requires_grad=True")
    return entries


def jacobian_with_modules(f, index, mode, args):
    """The Jacobian of ``f`` with respect to the Module argument ``index``: a dict keyed like
    ``named_parameters()`` of arrays of shape ``out.shape + parameter.shape`` (as JAX's
    jacobian of a dict of parameters, and torch.func.jacrev)."""
    compiled = _plain_compiled(f, "jacobian")
    leaves = _leaves_of(args, index, "jacobian")
    flat = flat_function(compiled.pyfunc, args, compiled.backend)
    flat_args = flat_arguments(args)
    out = flat.run(flat_args)
    if isinstance(out, tuple):
        raise CallError("jacobian: the function must return one array or scalar")
    out_shape = np.shape(out)
    shapes = [np.shape(flat_args[k]) for k, _ in leaves]
    result = OrderedDict()
    if mode == "rev":
        derived = flat.chain((("vjp", tuple(k for k, _ in leaves), False),))
        dtype = np.result_type(out, *(flat_args[k] for k, _ in leaves))
        rows = [derived.call_with_extra(flat_args, (e,))[-len(leaves):] for e in _unit_tensors(out_shape, dtype)]
        for j, ((_, name), shape) in enumerate(zip(leaves, shapes)):
            stacked = np.stack([np.reshape(row[j], -1) for row in rows]) if rows else np.zeros((0, int(np.prod(shape))))
            result[name] = stacked.reshape(out_shape + shape)
    else:
        for (k, name), shape in zip(leaves, shapes):
            derived = flat.chain((("jvp", (k,), True),))
            dtype = np.result_type(out, flat_args[k])
            columns = [np.reshape(derived.call_with_extra(flat_args, (e,))[-1], -1)
                       for e in _unit_tensors(shape, dtype)]
            matrix = np.stack(columns, axis=1) if columns else np.zeros((int(np.prod(out_shape)), 0))
            result[name] = matrix.reshape(out_shape + shape)
    return result


def hessian_with_modules(f, index, args):
    """The Hessian of scalar ``f`` with respect to the Module argument ``index``: a dict of dicts,
    ``H[a][b]`` of shape ``a.shape + b.shape`` for parameter names a, b (as JAX's hessian of a dict
    of parameters, and torch.func.hessian). One forward-over-reverse column per parameter entry."""
    compiled = _plain_compiled(f, "hessian")
    leaves = _leaves_of(args, index, "hessian")
    flat = flat_function(compiled.pyfunc, args, compiled.backend)
    flat_args = flat_arguments(args)
    indices = tuple(k for k, _ in leaves)
    result = OrderedDict((name, OrderedDict()) for _, name in leaves)
    for k, a in leaves:
        column = flat.chain((("grad", indices, False), ("jvp", (k,), True)))
        shape = np.shape(flat_args[k])
        columns = [column.call_with_extra(flat_args, (e,)) for e in _unit_tensors(shape, flat_args[k].dtype)]
        for j, (m, b) in enumerate(leaves):
            other = np.shape(flat_args[m])
            stacked = np.stack([np.asarray(c[j] if isinstance(c, tuple) else c) for c in columns])
            result[a][b] = stacked.reshape(shape + other)
    return result


# ------------------------------------------------------------------ inspecting (call_signatures.py)
def called_with_modules(root):
    """Whether ``root`` (a compiled function) was called with a Module argument."""
    pyfunc = getattr(root, "pyfunc", None)
    return any(key[0] is pyfunc for key in list(_flat_functions))


def flat_target(target, args, what):
    """(flat function, flat arguments) that a call of ``target`` with Module arguments runs."""
    root = target
    while isinstance(root, DerivedFunction):
        root = root.base
    if isinstance(root, FlatFunction):  # the pullback of vjp with a Module: already flat
        return target, flat_arguments(args)
    if isinstance(target, CompiledFunction):
        return flat_function(target.pyfunc, args, target.backend), flat_arguments(args)
    target.check_arity(args)
    # hessian(f, wrt=k) and jacobian(f, wrt=k) of a Module: dicts assembled from many functions
    if ((target.kind in ("hessian", "jacobian", "vjp") or target.tangents_only)
            and any(isinstance(args[k], Module) for k in target.wrt)):
        k = next(k for k in target.wrt if isinstance(args[k], Module))
        raise CallError(f"adcompile.{what}: the Hessian or Jacobian with respect to the Module argument "
                        f"{target.param_names[k]!r} is assembled from one generated function per parameter; "
                        f"inspect the gradient instead: adcompile.{what}(adcompile.grad(f, wrt={k}), "
                        f"{', '.join(target.param_names)})")
    flat, _ = _flat_chain(target, args, _trainable_positions(args))  # what the call runs
    return flat, flat_arguments(args)


register_module_compiler(ModuleCompiler(
    call_module=call_module, run=run_with_modules, jvp=jvp_with_modules, hvp=hvp_with_modules,
    vjp=vjp_with_modules, jacobian=jacobian_with_modules, hessian=hessian_with_modules,
    flat_target=flat_target, called_with_modules=called_with_modules))

__all__ = ["call_module", "run_with_modules", "hvp_with_modules", "jvp_with_modules", "vjp_with_modules",
           "jacobian_with_modules", "hessian_with_modules", "flat_function", "flat_arguments", "module_key",
           "signature_of"]
