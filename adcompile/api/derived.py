"""``grad`` and ``value_and_grad``, and where every derived function is made from:
``DerivedFunction`` (``derived_function.py``) with one class per kind (``derived_kinds.py``).
The other transforms' entry points are in ``derivatives/`` (forward, pullback, vmapping)."""
from ..errors import CallError
from .derived_function import DerivedFunction, wrt_indices
from .derived_kinds import MATRIX_KINDS

__all__ = ["DerivedFunction", "MATRIX_KINDS", "wrt_indices", "grad", "value_and_grad", "wrt_or_argnums",
           "DEFAULT_WRT"]


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
