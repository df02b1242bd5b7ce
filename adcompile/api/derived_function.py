"""``DerivedFunction``: a transform (gradient, vjp, jvp, Hessian, Jacobian) of a compiled or derived
function, itself specialised and compiled per signature. What every kind shares is here; each
kind is one small class in ``derived_kinds.py`` (its IR, how its results reach the user).
``DerivedFunction(base, kind, wrt, ...)`` makes the class of ``kind``: every subclass names its
``kind``, and is found by it (``__init_subclass__``)."""
import numpy as np

from ..errors import CallError
from ..ir.clone import copy_function
from ..passes.observed_passes import optimize_observed
from . import specialised
from .compiled import as_compiled
from .specialised import Specialised, signature_of


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


class DerivedFunction(Specialised):
    """A transform of another (compiled or derived) function.

    kinds: ``grad``, ``value_and_grad``, ``vjp`` (reverse mode), ``jvp`` (forward mode),
    ``hessian`` and ``jacobian`` (a loop of jvps or vjps, ``transforms/matrix_ir.py``). The derived IR
    takes the base's parameters followed by one cotangent per base result (vjp) or one
    tangent per differentiated argument (jvp). Every kind applies to every other: each is
    an IR function that the transforms take again.
    """

    returns_primal = False
    kind = None  # each subclass's: the name DerivedFunction(base, kind, ...) makes it by
    needs_wrt = False  # a gradient: no argument to differentiate is an error
    returns_gradients = False  # its results include one gradient per differentiated argument
    _kinds = {}

    def __init_subclass__(cls, **options):
        super().__init_subclass__(**options)
        if cls.kind is not None:
            DerivedFunction._kinds[cls.kind] = cls

    def __new__(cls, base=None, kind=None, *args, **options):
        if cls is DerivedFunction:
            if kind not in DerivedFunction._kinds:
                raise CallError(f"unknown derivative kind {kind!r}; one of {sorted(DerivedFunction._kinds)}")
            cls = DerivedFunction._kinds[kind]
        return super().__new__(cls)

    @property
    def static_positions(self):
        return self.base.static_positions

    def __init__(self, base, kind, wrt, tangents_only=False, mode="rev", has_aux=False):
        super().__init__()
        self.base = as_compiled(base)
        self.has_aux = bool(has_aux)  # grad, value_and_grad, jacobian, hessian: the base returns (out, aux)
        self.tangents_only = tangents_only  # jvp: return only the output tangents
        self.mode = mode  # jacobian: "rev" (rows of vjps) or "fwd" (columns of jvps)
        self.backend = self.base.backend
        self.tiered = self.base.tiered
        self.fuse, self.parallel = self.base.fuse, self.base.parallel
        self.param_names = self.base.param_names
        self.name = f"{kind}({self.base.name})"
        self.wrt, self.wrt_is_tuple = (wrt_indices(self.base, wrt) if wrt is not None
                                       else (None, True))

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
        if not indices and self.needs_wrt:
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

    def check_base_is_primal(self, what):
        """``has_aux`` takes the user's function, whose result is ``(what, aux)``."""
        if isinstance(self.base, DerivedFunction):
            raise CallError(f"{self.name}: has_aux=True takes a compiled or plain Python function returning "
                            f"({what}, aux), not the derived function {self.base.name}")

    def ir(self, sig):
        derived = self.derived_ir(sig, self.resolved_wrt(sig))
        if specialised.OPTIMIZE:
            derived = optimize_observed(copy_function(derived), self.name)  # ir_stages can watch
        return derived

    def derived_ir(self, sig, wrt):
        """The IR of this transform of the base for ``sig``, with respect to parameters ``wrt``."""
        raise NotImplementedError

    def signature(self, args):
        return signature_of(args, self.base.name)

    def results_tree(self, base, grads):
        """The structure of this transform's results (``result_trees.py``) given its base's,
        ``base``, and that of its gradients, ``grads`` (None unless ``returns_gradients``)."""
        raise NotImplementedError

    def split(self, sig, result):
        """(values, derivatives) of a raw result tuple, shaped as the user expects."""
        base_ir = self.base.ir(sig)
        n_wrt = len(self.resolved_wrt(sig))
        grads = tuple(result[len(result) - n_wrt:])
        grads = grads if self.wrt_is_tuple else grads[0]
        values = tuple(result[:len(result) - n_wrt])
        values = values if base_ir.returns_tuple else values[0]
        return values, grads

    def invoke(self, args, kwargs):
        if kwargs or len(args) != len(self.param_names):
            args = self.call_arguments(args, kwargs)
        return self.run(args)  # a Module or pytree argument: the boundary (modules/dispatch.py)

    def user_returns_tuple(self, sig):
        """Whether calling this function returns a tuple (else a single value)."""
        return True

    def wrt_arg(self):
        if self.wrt is None:
            return None
        return tuple(self.wrt) if self.wrt_is_tuple else self.wrt[0]

    def call_with_extra(self, args, extra):
        """Run with cotangents (vjp) or tangents (jvp) appended after the arguments."""
        return self.run(args, extra)

    def __repr__(self):
        return f"<adcompile {self.name}>"
