"""Per-signature specialisation, the machinery every compiled and derived function shares.

A function is specialised per argument signature (dtype and ndim of each argument): the typed
IR is built for that signature, transformed, turned into source, lowered for numba, and loaded
by the backend; a call then costs a dict lookup on top of the compiled code (``plan``).
``CompiledFunction`` (``compiled.py``) wraps the user's function, ``DerivedFunction``
(``derived.py``) a transform of another function. Nothing is compiled before the first call.
"""
import inspect
import threading

import numpy as np

from ..backend.loader import load
from ..backend.tiers import NUMBA, PYTHON, enabled, load_tiered, loads_quickly
from ..backend.unfused_fallback import WithUnfusedFallback
from ..boundary import for_user, user_error
from .call_signatures import resolve, signature_for
from ..codegen.function_parts import split_long_function
from ..codegen.python import generate
from ..errors import AdCompileError, CallError
from ..frontend.values import regroup_results
from ..ir.nodes import For, While, walk
from ..ir.types import describe_value, type_of_value
from ..lowering.bounds_checks import needs_bounds_checks
from ..lowering.deferred_fallbacks import argument_effects
from ..lowering.pipeline import lower_for_backend
from ..modules.dispatch import module_compiler
from ..modules.module import needs_flat_function
from .notebook_display import html_display
from .run_errors import explain_failure
from .source_stages import DIFFERENTIATED, source_at_stage
from .written_arguments import checking_written_arguments

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


takes_flat_call = needs_flat_function  # a Module or a pytree argument: ``module_compiler/`` runs the call


def _fast_key(value):
    """A cheap key determining an argument's signature entry."""
    if isinstance(value, np.ndarray):
        return value.dtype.num, value.ndim
    return type(value)

class Specialised:
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
        return base.boundscheck if isinstance(base, Specialised) else self._boundscheck

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

    def checks_indices(self, fn_ir):
        """Whether numba checks the indices of ``fn_ir``'s code: unless ``boundscheck=False``,
        wherever ``fn_ir`` indexes an array by integers (``lowering/bounds_checks.py``: the
        lowering's own indices are in range by construction)."""
        return self.backend != NUMBA or (self.boundscheck and needs_bounds_checks(fn_ir))

    def code_origin(self, fn_ir):
        """What the generated file's header says ``fn_ir``'s code comes from: ``origin()``, and
        whether numba compiles it without bounds checks, and why (so that such code has a file
        of its own)."""
        if self.checks_indices(fn_ir):
            return self.origin()
        why = "boundscheck=False" if not self.boundscheck else "every index in range by construction"
        return f"{self.origin()}, compiled without bounds checks ({why})"

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
                    if not self.checks_indices(fn_ir):
                        options = {**options, "boundscheck": False}
                    source = generate(code_ir, origin=self.code_origin(fn_ir))
                    if self.backend == NUMBA:  # LLVM's time grows faster than a function's length
                        source = split_long_function(source, code_ir.name)
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
        numba where that takes milliseconds (``tiers.loads_quickly``: its disk cache has the code
        and numba has started in this process), and for code with loops that pushes onto or pops
        from a tape it was given; other code with loops runs as Python until the machine code
        is ready, and a run still going then stops, puts back the arguments it wrote into and
        runs as machine code (``backend/handover.py``). Code whose fused loops
        left their unfused fallback out (``lowering/deferred_fallbacks.py``) reruns a call they
        do not handle with ``fn_ir``'s code, loaded the same way at that first need."""
        if code_ir is not fn_ir and getattr(code_ir, "defers_unfused_code", False):
            unfused_options = {k: v for k, v in options.items() if k != "parallel"}
            unfused_source = self.unfused_source(fn_ir)
            return WithUnfusedFallback(self._load_code(fn_ir, code_ir, source, options),
                                       lambda: self._load_code(fn_ir, fn_ir, unfused_source, unfused_options))
        return self._load_code(fn_ir, code_ir, source, options)

    def unfused_source(self, fn_ir):
        """The source of ``fn_ir`` without the lowering: the code ``fuse=False`` runs."""
        return generate(lower_for_backend(fn_ir, self.backend, fuse=False)[0], origin=self.code_origin(fn_ir))

    def _load_code(self, fn_ir, code_ir, source, options):
        if self.backend == NUMBA and enabled(self.tiered) and not loads_quickly(source, fn_ir.name):
            loops = has_loops(fn_ir)
            written, uses_given_tapes = argument_effects(fn_ir)
            if not loops or not uses_given_tapes:  # a run with loops may stop: it must leave no trace
                python_source = source if code_ir is fn_ir else self.unfused_source(fn_ir)
                return load_tiered(python_source, source, fn_ir.name, options, hand_over=loops,
                                   written=written if loops else ())
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
            last_tree_plan = self.__dict__.get("_tree_plan_last")  # pytrees of the last call's structures
            if last_tree_plan is not None:
                matched, result = last_tree_plan.call(self, args, extra)
                if matched:
                    return result
            if self.static_positions or takes_flat_call(args):  # a Module, pytree or static argument:
                # compiled as a flat function of the arrays (module_compiler/)
                return module_compiler().run(self, args, extra)
            self.check_arity(args)
            sig = self.signature(args)
            plan = self.plan(sig)
            self._fast_signatures[key] = sig
            self._fast_plans[key] = plan
        return self.run_plan(plan, args, extra)

    def known_plan(self, args):
        """The plan ``run`` used for arguments of the signature of ``args`` (plain arrays and
        numbers), if a call has made it; else None."""
        return self._fast_plans.get(tuple(map(_fast_key, args)))

    def run_plan(self, plan, args, extra=()):
        """The finished result of ``plan`` (made for the signature of ``args``) run on ``args``."""
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

