"""The public API: ``compile``, ``grad``, ``value_and_grad`` (other transforms: ``derivatives.py``, ``pullback.py``).

A ``CompiledFunction`` wraps the user's Python function; a ``DerivedFunction`` is a transform
of another function (its gradient, its vjp). Both are specialised per argument signature
(dtype and ndim of each argument): the typed IR is built for that signature, transformed,
turned into source, and compiled by the backend. Nothing is compiled before the first call.
"""
import inspect
import linecache
import threading

import numpy as np

from ..backend.loader import BACKENDS, load
from ..backend.tiers import NUMBA, PYTHON, enabled, in_disk_cache, load_tiered
from ..boundary import for_user, user_error
from .call_signatures import resolve, signature_for
from ..codegen.python import generate
from ..errors import (AdCompileError, CallError, Location, SourceUnavailableError, UnsupportedSyntaxError,
                     located)
from ..frontend.parse import translate
from ..frontend.source import function_name
from ..custom.rules import is_custom_rule
from ..frontend.values import regroup_results
from .derived_reverse import pullback_ir, reverse_applies, reverse_of_derived
from ..ir.builder import Namer
from ..ir.clone import copy_function
from ..ir.nodes import For, While, walk
from ..ir.types import describe_value, type_of_value
from ..lowering.pipeline import lower_for_backend
from .aux_outputs import aux_structure, finish_with_aux, loss_function, with_aux_results
from .matrix_ir import matrix_ir
from ..modules.dispatch import module_compiler
from ..modules.module import needs_flat_function
from .notebook_display import html_display
from .observed_passes import optimize_observed
from .run_errors import explain_failure
from .source_stages import DIFFERENTIATED, source_at_stage
from ..transforms.forward import forward
from ..transforms.reverse import reverse
from .written_arguments import checking_written_arguments

MATRIX_KINDS = ("hessian", "jacobian")  # derived functions returning one matrix
# The simplification passes; benchmarks/source_size.py switches them off to measure them.
OPTIMIZE = True


def signature_of(args, fname):
    types = []
    for k, value in enumerate(args):
        type_ = type_of_value(value)
        if type_ is None:
            hint = " (pass np.asarray(...) of it)" if isinstance(value, (list, tuple)) else ""
            raise CallError(f"{fname}: argument {k} has unsupported type {describe_value(value)}{hint} "
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


def has_loops(fn_ir):
    return any(isinstance(stmt, (For, While)) for stmt in walk(fn_ir.body))


_has_module = needs_flat_function  # a Module or a pytree argument: ``module_compiler/`` runs the call


def _fast_key(value):
    """A cheap key determining an argument's signature entry."""
    if isinstance(value, np.ndarray):
        return value.dtype.num, value.ndim
    return type(value)


class _Specialised:
    """Common machinery: per-signature IR, source and compiled callable."""

    backend = "numba"
    tiered = None  # run the generated Python while numba compiles (None: as ADCOMPILE_TIERED says)
    fuse = None  # loop fusion for numba: None follows ADCOMPILE_FUSE (on unless "0")
    parallel = False  # fused loops without a loop-carried dependence use numba.prange
    _boundscheck = True  # numba checks the user's indices (an IndexError, as numpy raises)
    returns_primal = True  # the results are the user function's (not a derived function's)
    static_positions = ()  # compile(f, static_argnums=...): arguments that are compile-time constants

    def __init__(self):
        self._specs = {}
        self._lowered = {}  # signature -> the IR its source was generated from (loops fused)
        self._plans = {}
        self._fast_plans = {}  # the same plans, keyed by what a call can see cheaply
        self._fast_signatures = {}  # what a call can see cheaply -> its signature
        self._last_signature = None
        self._lock = threading.RLock()  # first calls from several threads build a signature once

    @property
    def boundscheck(self):
        """Whether numba checks indices: the option of the function this one derives from."""
        base = getattr(self, "base", None)
        return base.boundscheck if isinstance(base, _Specialised) else self._boundscheck

    def __call__(self, *args, **kwargs):
        """Run the compiled code (``invoke``); an error told in the user's terms comes without
        adcompile's own traceback frames (``boundary.py``)."""
        try:
            return self.invoke(args, kwargs)
        except Exception as error:
            if not for_user(error):
                raise
            raise user_error(error) from None  # adcompile's frames hidden: ADCOMPILE_DEBUG=1 shows them

    def user_python_call(self, args):
        """``(function, arguments)``: the user's own Python function and the arguments of it
        among ``args`` (this function's), where running it in Python means what this function
        computes first (``run_errors.py`` re-runs it to tell a shape error); else None."""
        return None

    def code_origin(self):
        """What the generated file's header says it comes from: ``origin()``, and whether
        numba compiles it without bounds checks (so that such code has a file of its own)."""
        unchecked = self.backend == NUMBA and not self.boundscheck
        return f"{self.origin()}, compiled without bounds checks (boundscheck=False)" if unchecked else self.origin()

    def plan(self, sig):
        """(compiled callable, hidden arguments, result finisher) for a signature, cached so
        that a call costs one dict lookup on top of the compiled code."""
        plan = self._plans.get(sig)
        if plan is None:
            with self._lock:
                plan = self._plans.get(sig)
                if plan is None:
                    fn_ir, _, compiled = self.specialization(sig)
                    primal = self.primal_ir(sig)
                    hidden = tuple(getattr(primal, "hidden_values", ()))
                    compiled = checking_written_arguments(compiled, primal, len(self.param_names), self.name)
                    plan = self._plans[sig] = (compiled, hidden, self.finisher(sig, fn_ir))
        self._last_signature = sig
        return plan

    def finisher(self, sig, fn_ir):
        """The user's result from the compiled code's: float32 scalars restored, and a nested
        tuple, a list or a dict that the code returns flat rebuilt (its ``result_structure``)."""
        needs_float32 = any(atom.type.dtype == "f4" and atom.type.ndim == 0 for atom in fn_ir.results)
        restore = (lambda result: restore_float32(fn_ir, result)) if needs_float32 else (lambda result: result)
        structure = getattr(fn_ir, "result_structure", None) if self.returns_primal else None
        if structure is None:
            return restore
        return lambda result: regroup_results(structure, restore(result))

    def signature(self, args):
        return signature_of(args, self.name)

    def specialization(self, sig):
        spec = self._specs.get(sig)
        if spec is None:
            with self._lock:
                spec = self._specs.get(sig)
                if spec is None:
                    fn_ir = self.ir(sig)
                    code_ir, options = lower_for_backend(fn_ir, self.backend, self.fuse, self.parallel)
                    if self.backend == NUMBA and not self.boundscheck:
                        options = {**options, "boundscheck": False}
                    source = generate(code_ir, origin=self.code_origin())
                    spec = (fn_ir, source, self.load_code(fn_ir, code_ir, source, options))
                    self._lowered[sig] = code_ir
                    self._specs[sig] = spec
        self._last_signature = sig
        return spec

    def lowered_ir(self, sig):
        """The IR the source of ``sig`` was generated from: its IR, with loops fused for numba."""
        self.specialization(sig)
        return self._lowered[sig]

    def load_code(self, fn_ir, code_ir, source, options):
        """The callable running ``source`` (generated from ``code_ir``, ``fn_ir`` lowered for the
        backend, compiled with numba's ``options``): numba's, or tiered (``backend/tiers.py``:
        the Python of ``fn_ir`` first, without fused loops, while numba compiles). Waits for
        numba where its disk cache has the code, and for code whose own loops (not fused ones)
        would run scalar steps in Python, far slower than numba compiles."""
        if self.backend == NUMBA and enabled(self.tiered) and not has_loops(fn_ir) \
                and not in_disk_cache(source, fn_ir.name):
            python_source = source if code_ir is fn_ir else generate(fn_ir, origin=self.code_origin())
            return load_tiered(python_source, source, fn_ir.name, options)
        return load(source, fn_ir.name, self.backend, options)

    def tier(self, /, *args, wait=False, **kwargs):
        """Which code ran the last call with the signature of ``args`` (default: the last call's
        signature): "numba" (machine code) or "python" (the generated Python, while numba
        compiled in the background). ``wait=True`` waits for that compile to end and tells which
        code the next call runs: "numba", or the compile's error is raised as a call raises it."""
        sig = signature_for(self, args, "tier", kwargs)
        fn_ir, _, compiled = self.specialization(sig)
        if not hasattr(compiled, "tier"):
            return PYTHON if self.backend == PYTHON else NUMBA
        try:
            return compiled.tier(wait)
        except AdCompileError:
            raise
        except Exception as error:
            explained = explain_failure(error, self, sig, ())
            if explained is error:
                raise
            raise explained from error

    def source(self, /, *args, stage=DIFFERENTIATED, **kwargs):
        """The generated code for the signature of ``args`` (default: the last call's) at
        ``stage``: as ``adcompile.source(self, *args, stage=stage)``."""
        return source_at_stage(*resolve(self, args, "source", kwargs), stage)

    def _repr_html_(self):
        return html_display(self)  # notebooks: the signature and generated source

    def run(self, args, extra=()):
        """The finished result of calling the compiled code on ``args`` (and ``extra``)."""
        key = tuple(map(_fast_key, args))
        plan = self._fast_plans.get(key)
        if plan is None:
            if self.static_positions or _has_module(args):  # a Module, pytree or static argument:
                # compiled as a flat function of the arrays (module_compiler/)
                return module_compiler().run(self, args, extra)
            self.check_arity(args)
            sig = self.signature(args)
            plan = self.plan(sig)
            self._fast_signatures[key] = sig
            self._fast_plans[key] = plan
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

    def call_signature(self, args):
        """The signature of ``args`` (as ``signature``), cheaply for the arguments of a past call."""
        sig = self._fast_signatures.get(tuple(map(_fast_key, args)))
        return sig if sig is not None else self.signature(args)

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

    def __init__(self, pyfunc, backend="numba", tiered=None, fuse=None, parallel=False, boundscheck=True,
                 static_argnums=(), static_argnames=()):
        super().__init__()
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        self.called_rule = pyfunc if is_custom_rule(pyfunc) else None  # a custom_vjp/custom_jvp function
        pyfunc = pyfunc.fun if self.called_rule is not None else pyfunc
        _reject_async(pyfunc)
        self.pyfunc = pyfunc
        self.backend = backend
        self.tiered = tiered
        self.fuse, self.parallel = fuse, parallel
        self._boundscheck = bool(boundscheck)
        self.name = function_name(pyfunc)  # a lambda's: the name it is assigned to, or lambda_<line>
        self.param_names = list(inspect.signature(pyfunc).parameters)
        self.static_positions = static_positions(self.name, self.param_names, static_argnums, static_argnames)
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
                    self._ir[sig] = translate(self.pyfunc, list(sig), called_rule=self.called_rule)
        return self._ir[sig]

    ir = primal_ir

    def invoke(self, args, kwargs):
        if kwargs or len(args) != len(self.param_names):
            args = self.call_arguments(args, kwargs)
        return self.run(args)

    def python_function(self):
        return self.pyfunc

    def user_python_call(self, args):
        return self.pyfunc, args[:len(self.param_names)]

    def user_returns_tuple(self, sig):
        return self.primal_ir(sig).returns_tuple

    def __repr__(self):
        return f"<adcompile.compile {self.name}>"


def static_positions(name, param_names, argnums, argnames):
    """The sorted positions of the static arguments named by ``static_argnums``/``static_argnames``."""
    argnums = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums or ())
    argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames or ())
    positions = set()
    for k in argnums:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not -len(param_names) <= k < len(param_names):
            raise CallError(f"compile({name}): static_argnums={k!r} is not the position of one of its arguments "
                            f"({', '.join(param_names)})")
        positions.add(int(k) % len(param_names))
    for argname in argnames:
        if argname not in param_names:
            raise CallError(f"compile({name}): static_argnames={argname!r} names no argument of it "
                            f"({', '.join(param_names)})")
        positions.add(param_names.index(argname))
    return tuple(sorted(positions))


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
    if callable(f) and (hasattr(f, "__code__") or is_custom_rule(f)):
        return CompiledFunction(f)
    if isinstance(getattr(f, "derived", None), _Specialised):  # the pullback of vjp
        raise CallError(f"{f!r} holds the values of one forward pass, so it is not a function to "
                        "differentiate; differentiate the function itself (adcompile.vjp, grad or "
                        "jacobian of it: every transform applies to every derived function)")
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

    kinds: ``grad``, ``value_and_grad``, ``vjp`` (reverse mode), ``jvp`` (forward mode),
    ``hessian`` and ``jacobian`` (a loop of jvps or vjps, ``matrix_ir.py``). The derived IR
    takes the base's parameters followed by one cotangent per base result (vjp) or one
    tangent per differentiated argument (jvp). Every kind applies to every other: each is
    an IR function that the transforms take again.
    """

    returns_primal = False

    @property
    def static_positions(self):
        return self.base.static_positions

    def __init__(self, base, kind, wrt, tangents_only=False, mode="rev", has_aux=False):
        super().__init__()
        self.base = as_compiled(base)
        self.kind = kind
        self.has_aux = bool(has_aux)  # grad, value_and_grad: the base returns (loss, aux) (aux_outputs.py)
        self.tangents_only = tangents_only  # jvp: return only the output tangents
        self.mode = mode  # jacobian: "rev" (rows of vjps) or "fwd" (columns of jvps)
        self.backend = self.base.backend
        self.tiered = self.base.tiered
        self.fuse, self.parallel = self.base.fuse, self.base.parallel
        self.param_names = self.base.param_names
        self.name = f"{kind}({self.base.name})"
        self.wrt, self.wrt_is_tuple = (wrt_indices(self.base, wrt) if wrt is not None
                                       else (None, True))
        if kind in MATRIX_KINDS and (self.wrt is None or self.wrt_is_tuple):
            raise CallError(f"{kind}: wrt must be a single argument")
        if kind in MATRIX_KINDS:
            self.describe_matrix(self.param_names[self.wrt[0]])

    def describe_matrix(self, wrt_name):
        """Name and docstring of a Hessian or Jacobian, and ``derived``: the jvp (or vjp) whose
        calls fill one column (or row), whose code is the loop's body."""
        base, index = self.base, self.wrt[0]
        if self.kind == "hessian":
            self.name = f"hessian({base.name}, wrt={wrt_name!r})"
            self.__doc__ = (f"The Hessian of {base.name} with respect to {wrt_name}, shape {wrt_name}.shape + "
                            f"{wrt_name}.shape; call it with the arguments of {base.name}"
                            f"({', '.join(self.param_names)}).")
            self.derived = DerivedFunction(DerivedFunction(base, "grad", index), "jvp", index, tangents_only=True)
            return
        self.name = f"jacobian({base.name}, wrt={wrt_name!r}, mode={self.mode!r})"
        self.__doc__ = (f"The Jacobian of {base.name} with respect to {wrt_name}, shape out.shape + "
                        f"{wrt_name}.shape; call it with the arguments of {base.name}"
                        f"({', '.join(self.param_names)}).")
        by_rows = self.mode == "rev"
        self.derived = DerivedFunction(base, "vjp" if by_rows else "jvp", index, tangents_only=not by_rows)

    def origin(self):
        return f"{self.kind} of {self.base.origin()}"

    def check_arity(self, args):
        self.base.check_arity(args)

    def python_function(self):
        return self.base.python_function()

    def user_python_call(self, args):
        return self.base.user_python_call(args[:len(self.param_names)])  # the base's arguments come first

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
        elif self.kind in MATRIX_KINDS:
            derived = self.matrix_ir(sig, wrt[0])
        elif self.has_aux:
            derived = self.reverse_with_aux(sig, wrt)
        elif isinstance(self.base, DerivedFunction):
            if self.kind in ("grad", "value_and_grad"):
                self.check_scalar_output(self.base.ir(sig))
            derived = reverse_of_derived(self.base, sig, wrt, self.kind)
        else:
            primal = self.base.ir(sig)
            if self.kind in ("grad", "value_and_grad"):
                self.check_scalar_output(primal)
            derived = reverse(primal, wrt, Namer(), mode=self.kind)
        if OPTIMIZE:
            derived = optimize_observed(copy_function(derived), self.name)  # ir_stages can watch
        return derived

    def reverse_with_aux(self, sig, wrt):
        """Reverse mode of ``(loss, aux) = f(...)`` with respect to ``loss`` only, aux returned too."""
        if isinstance(self.base, DerivedFunction):
            raise CallError(f"{self.name}: has_aux=True takes a compiled or plain Python function returning "
                            f"(loss, aux), not the derived function {self.base.name}")
        loss, copies, namer = loss_function(self.base.ir(sig), self.name)
        self.check_scalar_output(loss)
        return with_aux_results(reverse(loss, wrt, namer, mode=self.kind), copies, len(wrt))

    def matrix_ir(self, sig, index):
        """The Hessian (a Jacobian of the gradient, by columns: forward over reverse) or the
        Jacobian, as a loop over unit directions (``matrix_ir.py``)."""
        base_ir = self.base.ir(sig)
        if self.kind == "hessian":
            self.check_scalar_output(base_ir)
            gradient = DerivedFunction(self.base, "grad", index).ir(sig)
            column = forward(gradient, [index], Namer())
            return matrix_ir(f"{base_ir.name}_hessian", gradient, index, "fwd", column, shape_source=index)
        if len(base_ir.results) != 1:
            raise CallError(f"{self.name}: the function must return one array or scalar, not a tuple")
        # rows need a backward sweep each; where reverse mode does not take the IR, columns are cheaper
        mode = "rev" if self.mode == "rev" and reverse_applies(self.base, sig) else "fwd"
        if mode == "rev":
            line = pullback_ir(self.base, sig, [index])
        else:
            line = forward(base_ir, [index], Namer())
        return matrix_ir(f"{base_ir.name}_jacobian", base_ir, index, mode, line)

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
        if self.has_aux:
            aux_def = aux_structure(self.base.ir(sig), self.name)
            finish = finish_with_aux(self.kind, aux_def, len(self.resolved_wrt(sig)), self.wrt_is_tuple)
            return lambda result: finish(restore(result))

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

    def invoke(self, args, kwargs):
        if kwargs or len(args) != len(self.param_names):
            args = self.call_arguments(args, kwargs)
        if self.kind in MATRIX_KINDS and _has_module(args[self.wrt[0]:self.wrt[0] + 1]):
            return self.matrix_of_module(args)
        return self.run(args)

    def matrix_of_module(self, args):
        """A Hessian or Jacobian with respect to a Module: dicts keyed like named_parameters()."""
        if self.kind == "hessian":
            return module_compiler().hessian(self.base, self.wrt[0], args)
        return module_compiler().jacobian(self.base, self.wrt[0], self.mode, args)

    def call_arguments(self, args, kwargs=None):
        if self.kind not in MATRIX_KINDS or not (kwargs or len(args) != len(self.param_names)):
            return super().call_arguments(args, kwargs)
        root = self.base
        while isinstance(root, DerivedFunction):
            root = root.base
        try:  # told as the call of the function the matrix is of
            return root.call_arguments(args, kwargs)
        except CallError as error:
            raise CallError(f"{self.name}: {error}") from None

    def user_returns_tuple(self, sig):
        """Whether calling this function returns a tuple (else a single value)."""
        if self.kind in MATRIX_KINDS:
            return False
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


def compile(fn=None, *, backend="numba", tiered=None, fuse=None, parallel=False, boundscheck=True,
            static_argnums=(), static_argnames=()):
    """Decorator: compile ``fn`` with numba (``backend='python'`` runs the generated Python).

    Nothing is compiled before the first call; code is generated per argument signature
    (dtype and ndim of each argument). Keywords and defaults bind as in Python. With numba,
    the first calls of code without loops run the generated Python while numba compiles in
    the background (``fn.tier()`` says which ran); ``tiered=False`` (or the environment
    variable ``ADCOMPILE_TIERED=0``) makes the first call wait for numba instead. For numba,
    runs of array statements over one shape are fused into explicit loops (``fuse=False``,
    or ``ADCOMPILE_FUSE=0``, keeps one numpy call per statement); ``parallel=True`` runs
    fused loops without a loop-carried dependence with ``numba.prange``. numba checks every
    index of the user's code, as numpy does (an out-of-range ``x[i]`` raises ``IndexError``
    naming the line); ``boundscheck=False`` drops the checks, for speed, where the indices
    are known to be in range (an index out of range then reads or writes whatever memory is
    there). Functions derived from ``fn`` (``grad``, ``hessian`` ...) inherit these options.
    ``static_argnums`` / ``static_argnames`` (ints / names, as in ``jax.jit``) name arguments
    whose values are compile-time constants (a string choosing a branch, a tuple of sizes):
    hashable values, one specialisation per value, skipped by derivatives.

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
    options = dict(backend=backend, tiered=tiered, fuse=fuse, parallel=parallel, boundscheck=boundscheck,
                   static_argnums=static_argnums, static_argnames=static_argnames)
    if fn is None:
        return lambda f: CompiledFunction(f, **options)
    return CompiledFunction(fn, **options)


def _wrt_or_argnums(what, wrt, argnums):
    """``wrt``, or JAX's spelling ``argnums=`` of it (not both)."""
    if argnums is not None:
        if wrt is not _DEFAULT_WRT:
            raise CallError(f"{what}: pass wrt= or argnums= (JAX's name for it), not both")
        return argnums
    return 0 if wrt is _DEFAULT_WRT else wrt


class _DefaultWrt:
    """``wrt`` not given (so that ``argnums=`` may be): argument 0."""

    def __repr__(self):
        return "0"


_DEFAULT_WRT = _DefaultWrt()


def grad(f, wrt=_DEFAULT_WRT, *, argnums=None, has_aux=False):
    """The gradient of scalar-valued ``f`` with respect to argument(s) ``wrt`` (default 0): an
    int, an argument name, or a tuple of them (then the result is a tuple of gradients).
    ``argnums=`` is JAX's name for ``wrt``. A gradient has its argument's shape and dtype, and
    the gradient with respect to a tuple, list or dict of arrays (a pytree) is a tuple, list or
    dict like it. With ``has_aux=True``, ``f`` returns ``(loss, aux)``; the result is
    ``(gradient, aux)``. ``f`` may be a plain Python function (then it is compiled with numba)
    or an ``adcompile.compile`` function.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def loss(w, x):
    ...     return np.sum((w * x - 1.0) ** 2)
    >>> w, x = np.array([1.0, 2.0]), np.array([3.0, 0.5])
    >>> adcompile.grad(loss)(w, x)  # 2 (w x - 1) x
    array([12.,  0.])
    >>> adcompile.grad(loss, wrt=("w", "x"))(w, x)
    (array([12.,  0.]), array([4., 0.]))
    >>> @adcompile.compile(backend="python")
    ... def fit(params, x, y):  # a dict of parameters, read with constant keys
    ...     residual = params["slope"] * x + params["bias"] - y
    ...     return np.sum(residual ** 2), residual  # (loss, aux)
    >>> grads, residual = adcompile.grad(fit, has_aux=True)({"slope": 1.0, "bias": 0.0}, w, x)
    >>> {name: float(g) for name, g in grads.items()}  # a dict like params
    {'bias': -1.0, 'slope': 2.0}
    """
    return DerivedFunction(f, "grad", _wrt_or_argnums("grad", wrt, argnums), has_aux=has_aux)


def value_and_grad(f, wrt=_DEFAULT_WRT, *, argnums=None, has_aux=False):
    """A function returning ``(f(*args), gradient(s))`` from one pass (``wrt``, ``argnums`` as
    in ``grad``). With ``has_aux=True``, ``f`` returns ``(loss, aux)`` and the result is
    ``((loss, aux), gradient(s))``, as JAX's.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def loss(w):
    ...     return np.sum(w ** 2)
    >>> value, gradient = adcompile.value_and_grad(loss)(np.array([1.0, -3.0]))
    >>> float(value), gradient
    (10.0, array([ 2., -6.]))
    >>> @adcompile.compile(backend="python")
    ... def total(ws):  # a list argument
    ...     first, second = ws
    ...     return np.sum(first ** 2) + np.sum(second ** 2)
    >>> value, grads = adcompile.value_and_grad(total)([np.array([1.0]), np.array([2.0])])
    >>> grads  # a list of gradients
    [array([2.]), array([4.])]
    """
    return DerivedFunction(f, "value_and_grad", _wrt_or_argnums("value_and_grad", wrt, argnums), has_aux=has_aux)


def _check_against(values, outs, what):
    if len(values) != len(outs):
        raise CallError(f"expected {len(outs)} {what}(s), one per output, got {len(values)}")
    for value, out in zip(values, outs):
        type_ = type_of_value(value)
        if type_ is None or type_.ndim != out.type.ndim:
            raise CallError(f"a {what} must match its output: expected ndim {out.type.ndim}, got "
                            f"{type(value).__name__} {np.shape(value)}")
