"""The public API: ``compile``, ``grad``, ``value_and_grad``, ``vjp``, ``source``.

A ``CompiledFunction`` wraps the user's Python function; a ``DerivedFunction`` is a transform
of another function (its gradient, its vjp). Both are specialised per argument signature
(dtype and ndim of each argument): the typed IR is built for that signature, transformed,
turned into source, and compiled by the backend. Nothing is compiled before the first call.
"""
import inspect
import linecache
import threading

import numpy as np

from .backend.loader import load
from .codegen.python import generate
from .errors import (AdCompileError, CallError, Location, SourceUnavailableError, UnsupportedSyntaxError,
                     located)
from .frontend.parse import translate
from .ir.builder import Namer
from .ir.types import describe_value, type_of_value
from .ir_stages import optimize_observed
from .run_errors import explain_failure
from .ir.builder import const
from .ir.clone import copy_function
from .ir.nodes import Assign
from .transforms.arguments import written_arguments
from .transforms.forward import forward
from .transforms.reverse import reverse

BACKENDS = ("numba", "python")
# The simplification passes; benchmarks/source_size.py switches them off to measure them.
OPTIMIZE = True


def signature_of(args, fname):
    types = []
    for k, value in enumerate(args):
        type_ = type_of_value(value)
        if type_ is None:
            raise CallError(f"{fname}: argument {k} has unsupported type {describe_value(value)} "
                            "(use floats, ints, bools, None and numpy arrays of float64/float32/int64/bool)")
        types.append(type_)
    return tuple(types)


def restore_float32(fn_ir, result):
    """numba returns float32 scalars as Python floats: give them back their float32 dtype."""
    is_f4 = [atom.type.dtype == "f4" and atom.type.ndim == 0 for atom in fn_ir.results]
    if not any(is_f4):
        return result
    if fn_ir.returns_tuple:
        return tuple(np.float32(value) if f4 else value for value, f4 in zip(result, is_f4))
    return np.float32(result)


def _has_module(args):
    from .module import Module
    return any(isinstance(a, Module) for a in args)


def _fast_key(value):
    """A cheap key determining an argument's signature entry."""
    if isinstance(value, np.ndarray):
        return value.dtype.num, value.ndim
    return type(value)


class _Specialised:
    """Common machinery: per-signature IR, source and compiled callable."""

    backend = "numba"

    def __init__(self):
        self._specs = {}
        self._plans = {}
        self._fast_plans = {}  # the same plans, keyed by what a call can see cheaply
        self._last_signature = None
        self._lock = threading.RLock()  # first calls from several threads build a signature once

    def plan(self, sig):
        """(compiled callable, hidden arguments, result finisher) for a signature, cached so
        that a call costs one dict lookup on top of the compiled code."""
        plan = self._plans.get(sig)
        if plan is None:
            with self._lock:
                plan = self._plans.get(sig)
                if plan is None:
                    fn_ir, _, compiled = self.specialization(sig)
                    hidden = tuple(getattr(self.primal_ir(sig), "hidden_values", ()))
                    plan = self._plans[sig] = (compiled, hidden, self.finisher(sig, fn_ir))
        self._last_signature = sig
        return plan

    def finisher(self, sig, fn_ir):
        needs_float32 = any(atom.type.dtype == "f4" and atom.type.ndim == 0 for atom in fn_ir.results)
        return (lambda result: restore_float32(fn_ir, result)) if needs_float32 else (lambda result: result)

    def signature(self, args):
        return signature_of(args, self.name)

    def specialization(self, sig):
        spec = self._specs.get(sig)
        if spec is None:
            with self._lock:
                spec = self._specs.get(sig)
                if spec is None:
                    fn_ir = self.ir(sig)
                    source = generate(fn_ir, origin=self.origin())
                    spec = (fn_ir, source, load(source, fn_ir.name, self.backend))
                    self._specs[sig] = spec
        self._last_signature = sig
        return spec

    def source(self, /, *args, **kwargs):
        from .inspection import signature_for  # the last call's signature, or that of ``args``
        return self.specialization(signature_for(self, args, "source", kwargs))[1]

    def _repr_html_(self):
        from .inspection import html_display  # notebooks: the signature and generated source
        return html_display(self)

    def run(self, args, extra=()):
        """The finished result of calling the compiled code on ``args`` (and ``extra``)."""
        key = tuple(map(_fast_key, args))
        plan = self._fast_plans.get(key)
        if plan is None:
            if _has_module(args):  # a Module argument: compiled as a flat function of its arrays
                from .module_compile import run_with_modules
                return run_with_modules(self, args, extra)
            self.check_arity(args)
            plan = self._fast_plans[key] = self.plan(self.signature(args))
        compiled, hidden, finish = plan
        try:
            result = compiled(*args, *hidden, *extra)
        except AdCompileError:
            raise
        except Exception as error:  # told in the user's terms: which line of theirs failed
            explained = explain_failure(error, self, self.signature(args), (*args, *hidden, *extra))
            if explained is error:
                raise
            raise explained from error
        return finish(result)

    def call_arguments(self, args, kwargs=None):
        """The positional arguments of the call ``fn(*args, **kwargs)``: keywords and defaults
        bound as Python binds them. Calls and ``adcompile.source``/``ir``/``source_path`` with
        example arguments both bind here, so they specialise on the same signature."""
        if kwargs or len(args) != len(self.param_names):
            return tuple(self.bind(args, kwargs or {}))
        return tuple(args)

    def bind(self, args, kwargs):
        """Positional arguments from a call with keywords (and defaults), as Python binds them."""
        python_signature = inspect.signature(self.python_function())
        try:
            bound = python_signature.bind(*args, **kwargs)
        except TypeError as error:
            count = len(self.param_names)
            raise CallError(f"{self.name}() takes {count} argument{'s' if count != 1 else ''} "
                            f"({', '.join(self.param_names)}): {error}") from None
        bound.apply_defaults()
        return bound.args


class CompiledFunction(_Specialised):
    """``@adcompile.compile``: calling it runs the compiled forward function."""

    def __init__(self, pyfunc, backend="numba"):
        super().__init__()
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        _reject_async(pyfunc)
        self.pyfunc = pyfunc
        self.backend = backend
        self.name = getattr(pyfunc, "__name__", "function")
        self.param_names = list(inspect.signature(pyfunc).parameters)
        self._ir = {}
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc

    @property
    def __adcompile_python__(self):
        return self.pyfunc

    def origin(self):
        return f"{self.pyfunc.__module__}.{self.pyfunc.__qualname__}"

    def check_arity(self, args):
        if len(args) != len(self.param_names):
            raise CallError(f"{self.name}() takes {len(self.param_names)} arguments "
                            f"({', '.join(self.param_names)}) but {len(args)} were given")

    def primal_ir(self, sig):
        if sig not in self._ir:
            with self._lock:
                if sig not in self._ir:
                    self._ir[sig] = translate(self.pyfunc, list(sig))
        return self._ir[sig]

    ir = primal_ir

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != len(self.param_names):
            args = self.call_arguments(args, kwargs)
        return self.run(args)

    def python_function(self):
        return self.pyfunc

    def user_returns_tuple(self, sig):
        return self.primal_ir(sig).returns_tuple

    def __repr__(self):
        return f"<adcompile.compile {self.name}>"


def _reject_async(pyfunc):
    """An ``async def`` function returns a coroutine in Python: refuse it at its ``def`` line
    rather than compile it into something that returns a number. (``yield`` is rejected by the
    frontend, at the ``yield``.)"""
    if not (inspect.iscoroutinefunction(pyfunc) or inspect.isasyncgenfunction(pyfunc)):
        return
    code = pyfunc.__code__
    line = linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")
    location = Location(code.co_filename, code.co_firstlineno, None, line) if line else None
    raise located(UnsupportedSyntaxError, "async def is not supported by adcompile", location)


def as_compiled(f):
    if isinstance(f, _Specialised):
        return f
    if callable(f) and hasattr(f, "__code__"):
        return CompiledFunction(f)
    if isinstance(getattr(f, "derived", None), _Specialised):  # hessian(...), jacobian(...)
        raise CallError(f"{f!r} assembles a matrix in Python from many calls, so it cannot be "
                        "differentiated again; differentiate the function it is built from "
                        "(jacobian(grad(f)) is the Hessian of f, jvp(grad(f), ...) a column of it)")
    if callable(f):
        name = getattr(f, "__name__", type(f).__name__)
        from_numpy = isinstance(f, np.ufunc) or str(getattr(f, "__module__", "")).startswith("numpy")
        name = f"np.{name}" if from_numpy else name
        raise SourceUnavailableError(
            f"{name} is a {type(f).__name__}, not a Python function, so it has no Python source for "
            f"adcompile to differentiate; wrap it in a function, e.g. def f(x): return {name}(x)")
    raise CallError(f"expected a Python function or an adcompile function, got {type(f).__name__}")


def wrt_indices(f, wrt, n_args=None):
    """Normalise ``wrt`` (an int, a name, or a tuple of them) to (list of indices, is_tuple)."""
    names = f.param_names
    is_tuple = isinstance(wrt, (tuple, list))
    items = list(wrt) if is_tuple else [wrt]
    indices = []
    for item in items:
        if isinstance(item, str):
            if item not in names:
                raise CallError(f"wrt={item!r}: {f.name} has no argument named {item!r} (it has {names})")
            indices.append(names.index(item))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            k = int(item)
            if not -len(names) <= k < len(names):
                raise CallError(f"wrt={k} is out of range: {f.name} takes {len(names)} arguments")
            indices.append(k % len(names))
        else:
            raise CallError(f"wrt must be an int, an argument name or a tuple of them, not {item!r}")
    return indices, is_tuple


class DerivedFunction(_Specialised):
    """A transform of another (compiled or derived) function.

    kinds: ``grad``, ``value_and_grad``, ``vjp`` (reverse mode) and ``jvp`` (forward mode).
    The derived IR takes the base's parameters followed by one cotangent per base result
    (vjp) or one tangent per differentiated argument (jvp).
    """

    def __init__(self, base, kind, wrt, tangents_only=False):
        super().__init__()
        self.base = as_compiled(base)
        self.kind = kind
        self.tangents_only = tangents_only  # jvp: return only the output tangents
        self.backend = self.base.backend
        self.param_names = self.base.param_names
        self.name = f"{kind}({self.base.name})"
        self.wrt, self.wrt_is_tuple = (wrt_indices(self.base, wrt) if wrt is not None
                                       else (None, True))
        if isinstance(self.base, DerivedFunction) and kind != "jvp" and not self._second_order_by_forward():
            raise CallError(f"{self.name}: reverse mode of a derived function is supported for "
                            "grad/value_and_grad of a grad with respect to a scalar argument; use "
                            "adcompile.jvp, hvp or hessian (forward over reverse) instead")

    def _second_order_by_forward(self):
        base = self.base
        return (self.kind in ("grad", "value_and_grad") and base.kind == "grad"
                and not base.wrt_is_tuple and not isinstance(base.base, DerivedFunction))

    def origin(self):
        return f"{self.kind} of {self.base.origin()}"

    def check_arity(self, args):
        self.base.check_arity(args)

    def python_function(self):
        return self.base.python_function()

    def primal_ir(self, sig):
        return self.base.primal_ir(sig)

    def resolved_wrt(self, sig):
        if self.wrt is not None:
            indices = self.wrt
        else:
            indices = [k for k, t in enumerate(sig) if t.is_float]
        for k in indices:
            if not sig[k].is_float:
                hint = "" if sig[k].dtype == "none" else \
                    " (pass floats: float(n) for a number, a.astype(np.float64) for an array)"
                raise CallError(f"{self.name}: cannot differentiate with respect to argument "
                                f"'{self.param_names[k]}', which is {sig[k].describe()}: only float "
                                f"scalars and float arrays have derivatives{hint}")
        if not indices and self.kind in ("grad", "value_and_grad"):
            raise CallError(f"{self.name}: nothing to differentiate: wrt names no argument, and no "
                            f"argument is a float scalar or a float array")
        return indices

    def check_scalar_output(self, fn_ir):
        results = fn_ir.results
        if len(results) != 1 or results[0].type.ndim != 0 or not results[0].type.is_float:
            shape = "a tuple" if len(results) != 1 else results[0].type.describe()
            raise CallError(f"{self.name}: grad needs a function returning one float scalar, but "
                            f"{self.base.name} returns {shape}; use adcompile.vjp or "
                            f"adcompile.jacobian for non-scalar outputs")

    def ir(self, sig):
        wrt = self.resolved_wrt(sig)
        if self.kind == "jvp":
            base_ir = self.base.ir(sig)
            derived = forward(base_ir, wrt, Namer())
            if self.tangents_only:
                derived.results = derived.results[len(base_ir.results):]
        elif isinstance(self.base, DerivedFunction):
            derived = self.second_order_ir(sig, wrt)
        else:
            primal = self.base.ir(sig)
            if self.kind in ("grad", "value_and_grad"):
                self.check_scalar_output(primal)
            derived = reverse(primal, wrt, Namer(), mode=self.kind)
        if OPTIMIZE:
            derived = optimize_observed(copy_function(derived), self.name)  # ir_stages can watch
        return derived

    def second_order_ir(self, sig, wrt):
        """grad_j(grad_i f) = H[i, j] = jvp of grad_j f in the direction e_i (H is symmetric)."""
        inner = self.base
        i = inner.resolved_wrt(sig)[0]
        if sig[i].ndim != 0:
            raise CallError(f"{self.name}: the inner gradient is with respect to an array, so it is "
                            "not a scalar function; use adcompile.hessian or adcompile.jacobian")
        self.check_scalar_output(self.base.base.ir(sig))
        gradient = reverse(self.base.base.ir(sig), wrt, Namer(), mode="grad")
        derived = forward(gradient, [i], Namer())
        unit = derived.params.pop()  # the tangent of x_i is the unit 1.0
        derived.body.insert(0, Assign(unit, "alias", [const(1.0)]))
        derived.results = derived.results[len(gradient.results):]
        return derived

    def signature(self, args):
        return signature_of(args, self.base.name)

    def split(self, sig, result):
        """(values, derivatives) of a raw result tuple, shaped as the user expects."""
        base_ir = self.base.ir(sig) if self.kind != "grad" else None
        n_wrt = len(self.resolved_wrt(sig))
        grads = tuple(result[len(result) - n_wrt:])
        grads = grads if self.wrt_is_tuple else grads[0]
        if self.kind == "grad":
            return None, grads
        values = tuple(result[:len(result) - n_wrt])
        values = values if base_ir.returns_tuple else values[0]
        return values, grads

    def finisher(self, sig, fn_ir):
        restore = super().finisher(sig, fn_ir)
        if self.kind not in ("grad", "value_and_grad"):
            return restore

        n_wrt = len(self.resolved_wrt(sig))
        single_value = self.kind == "value_and_grad" and not self.base.ir(sig).returns_tuple

        def finish(result):
            result = restore(result)
            grads = tuple(result[len(result) - n_wrt:])
            grads = grads if self.wrt_is_tuple else grads[0]
            if self.kind == "grad":
                return grads
            values = tuple(result[:len(result) - n_wrt])
            return (values[0] if single_value else values), grads
        return finish

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != len(self.param_names):
            args = self.call_arguments(args, kwargs)
        if self.kind == "value_and_grad" and isinstance(self.base, DerivedFunction):
            return self.base(*args), DerivedFunction(self.base, "grad", self.wrt_arg())(*args)
        return self.run(args)

    def user_returns_tuple(self, sig):
        """Whether calling this function returns a tuple (else a single value)."""
        return self.wrt_is_tuple if self.kind == "grad" else True

    def wrt_arg(self):
        if self.wrt is None:
            return None
        return tuple(self.wrt) if self.wrt_is_tuple else self.wrt[0]

    def call_with_extra(self, args, extra):
        """Run with cotangents (vjp) or tangents (jvp) appended after the arguments."""
        return self.run(args, extra)

    def __repr__(self):
        return f"<adcompile {self.name}>"


def compile(fn=None, *, backend="numba"):
    """Decorator: compile ``fn`` with numba (``backend='python'`` runs the generated Python).

    Nothing is compiled before the first call; code is generated per argument signature
    (dtype and ndim of each argument). Keywords and defaults bind as in Python.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")  # without backend=, numba compiles the generated code
    ... def energy(x, k=0.5):
    ...     return k * np.sum(x ** 2)
    >>> float(energy(np.array([1.0, 2.0])))
    2.5
    >>> float(energy(np.array([1.0, 2.0]), k=2.0))
    10.0
    >>> text = adcompile.source(energy)  # the generated Python of the last call
    >>> print(text[text.index("def energy"):])
    def energy(x, k):
        return k * np.sum(x * x)
    <BLANKLINE>
    """
    if fn is None:
        return lambda f: CompiledFunction(f, backend=backend)
    return CompiledFunction(fn, backend=backend)


def grad(f, wrt=0):
    """The gradient of scalar-valued ``f`` with respect to argument(s) ``wrt``: an int, an
    argument name, or a tuple of them (then the result is a tuple of gradients). A gradient
    has its argument's shape and dtype. ``f`` may be a plain Python function (then it is
    compiled with numba) or an ``adcompile.compile`` function.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def loss(w, x):
    ...     return np.sum((w * x - 1.0) ** 2)
    >>> w, x = np.array([1.0, 2.0]), np.array([3.0, 0.5])
    >>> adcompile.grad(loss)(w, x)  # 2 (w x - 1) x
    array([12.,  0.])
    >>> adcompile.grad(loss, wrt=("w", "x"))(w, x)
    (array([12.,  0.]), array([4., 0.]))
    """
    return DerivedFunction(f, "grad", wrt)


def value_and_grad(f, wrt=0):
    """A function returning ``(f(*args), gradient(s))`` from one pass (``wrt`` as in ``grad``).

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def loss(w):
    ...     return np.sum(w ** 2)
    >>> value, gradient = adcompile.value_and_grad(loss)(np.array([1.0, -3.0]))
    >>> float(value), gradient
    (10.0, array([ 2., -6.]))
    """
    return DerivedFunction(f, "value_and_grad", wrt)


def _check_against(values, outs, what):
    if len(values) != len(outs):
        raise CallError(f"expected {len(outs)} {what}(s), one per output, got {len(values)}")
    for value, out in zip(values, outs):
        type_ = type_of_value(value)
        if type_ is None or type_.ndim != out.type.ndim:
            raise CallError(f"a {what} must match its output: expected ndim {out.type.ndim}, got "
                            f"{type(value).__name__} {np.shape(value)}")


def vjp(f, *args, wrt=None):
    """JAX-style ``(out, pullback)``: ``out = f(*args)``, and ``pullback(cotangent)`` returns
    the tuple of ``cotangent @ J`` for each float argument (or each argument in ``wrt``). A
    tuple output takes a tuple of cotangents, one per output.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def scaled_squares(x, c):
    ...     return c * x ** 2
    >>> out, pullback = adcompile.vjp(scaled_squares, np.array([1.0, 3.0]), 2.0)
    >>> out
    array([ 2., 18.])
    >>> dx, dc = pullback(np.array([1.0, 1.0]))  # ct * 2 c x, and sum(ct * x ** 2)
    >>> dx, float(dc)
    (array([ 4., 12.]), 10.0)
    """
    if _has_module(args):  # a Module's gradient is a dict keyed like named_parameters()
        from .module_compile import vjp_with_modules
        return vjp_with_modules(f, args, wrt)
    compiled = as_compiled(f)
    args = compiled.call_arguments(args)  # defaults bound as a call binds them
    derived = DerivedFunction(compiled, "vjp", wrt)
    derived._last_signature = derived.signature(args)
    primal_ir = compiled.ir(derived._last_signature)
    written = set(written_arguments(primal_ir))
    # like every derived function, vjp leaves the caller's arrays as they were
    out = compiled(*(arg.copy() if param in written else arg for arg, param in zip(args, primal_ir.params)))

    def pullback(*cotangents):
        if len(cotangents) == 1 and isinstance(cotangents[0], tuple):
            cotangents = cotangents[0]
        cotangents = tuple(np.asarray(c, dtype=float) if isinstance(c, list) else c for c in cotangents)
        # a 0-d array is a number (the generated code updates scalar adjoints with +=)
        cotangents = tuple(c[()] if isinstance(c, np.ndarray) and c.ndim == 0 else c for c in cotangents)
        sig = derived.signature(args)
        _check_against(cotangents, compiled.ir(sig).results, "cotangent")
        result = derived.call_with_extra(args, cotangents)
        return tuple(result[len(cotangents):])

    pullback.derived = derived
    return out, pullback


from .inspection import source  # noqa: E402,F401  (adcompile.source; inspection imports api lazily)
