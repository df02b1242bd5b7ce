"""``grad``, ``value_and_grad`` and ``DerivedFunction``: a transform (gradient, vjp, jvp,
Hessian, Jacobian) of a compiled function, itself specialised and compiled per signature.
The other transforms' entry points are in ``derivatives/`` (forward, pullback, vmapping)."""

import numpy as np

from ..errors import CallError
from ..transforms.derived_reverse import pullback_ir, reverse_applies, reverse_of_derived
from ..ir.builder import Namer
from ..ir.clone import copy_function
from .aux_outputs import (aux_structure, finish_matrix_with_aux, finish_with_aux, loss_function, matrix_with_aux,
                          with_aux_results)
from ..transforms.matrix_ir import matrix_ir
from ..passes.observed_passes import optimize_observed
from ..transforms.forward import forward
from ..transforms.reverse import reverse
from . import specialised
from .compiled import as_compiled
from .specialised import Specialised, signature_of

MATRIX_KINDS = ("hessian", "jacobian")  # derived functions returning one matrix


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

    @property
    def static_positions(self):
        return self.base.static_positions

    def __init__(self, base, kind, wrt, tangents_only=False, mode="rev", has_aux=False):
        super().__init__()
        self.base = as_compiled(base)
        self.kind = kind
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
        if specialised.OPTIMIZE:
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
        Jacobian, as a loop over unit directions (``transforms/matrix_ir.py``)."""
        base_ir = self.base.ir(sig)
        if self.has_aux:
            if isinstance(self.base, DerivedFunction):
                raise CallError(f"{self.name}: has_aux=True takes a compiled or plain Python function returning "
                                f"(out, aux), not the derived function {self.base.name}")
            return matrix_with_aux(self.kind, base_ir, index, self.mode, self.name)
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
        if self.kind in MATRIX_KINDS and self.has_aux:
            finish_matrix = finish_matrix_with_aux(aux_structure(self.base.ir(sig), self.name))
            return lambda result: finish_matrix(restore(result))
        if self.kind not in ("grad", "value_and_grad"):
            return restore
        if self.has_aux:
            aux_def = aux_structure(self.base.ir(sig), self.name)
            finish_aux = finish_with_aux(self.kind, aux_def, len(self.resolved_wrt(sig)), self.wrt_is_tuple)
            return lambda result: finish_aux(restore(result))

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
        return self.run(args)  # a Hessian or Jacobian of a Module or pytree: module_compiler/matrices.py

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
            return self.has_aux
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

def wrt_or_argnums(what, wrt, argnums):
    """``wrt``, or JAX's spelling ``argnums=`` of it (not both)."""
    if argnums is not None:
        if wrt is not DEFAULT_WRT:
            raise CallError(f"{what}: pass wrt= or argnums= (JAX's name for it), not both")
        return argnums
    return 0 if wrt is DEFAULT_WRT else wrt


class _DefaultWrt:
    """``wrt`` not given (so that ``argnums=`` may be): argument 0."""

    def __repr__(self):
        return "0"


DEFAULT_WRT = _DefaultWrt()


def grad(f, wrt=DEFAULT_WRT, *, argnums=None, has_aux=False):
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
    return DerivedFunction(f, "grad", wrt_or_argnums("grad", wrt, argnums), has_aux=has_aux)


def value_and_grad(f, wrt=DEFAULT_WRT, *, argnums=None, has_aux=False):
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
    return DerivedFunction(f, "value_and_grad", wrt_or_argnums("value_and_grad", wrt, argnums), has_aux=has_aux)
