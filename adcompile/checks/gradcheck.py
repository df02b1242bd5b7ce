"""Numerical checks of derivatives: ``gradcheck`` and ``gradgradcheck``.

The derivatives computed by adcompile are compared with central finite differences, at the
tolerances given or the documented defaults for the arguments' precision
(``numeric_checks.py``). A check can fail: it raises ``GradcheckError`` naming the argument
and the worst mismatch. Given a custom Function's ``apply``, they check its hand-written
``backward`` instead (``function_checks.py``).
"""
import numpy as np

from ..boundary import api_boundary
from ..api.derived_cache import compiled_function, derived_function
from ..derivatives.forward import hvp
from ..tree import flatten, is_container, path_text
from .custom_functions import check_backward, check_double_backward, function_of
from .numeric import FIRST_ORDER, SECOND_ORDER, GradcheckError, check_gradient, check_hessian_vector_products, \
    tolerances


@api_boundary
def gradcheck(f, args, wrt=None, eps=None, rtol=None, atol=None, max_elementwise=64, seed=0, order=1):
    """Check ``adcompile.grad(f, wrt)`` at ``args`` against central differences.

    ``f`` must return a float scalar. Returns True, or raises GradcheckError with the worst
    mismatch. Each gradient must agree elementwise (``|g - fd| <= atol + rtol * |fd|``; for
    at most ``max_elementwise`` elements per argument, a random sample of larger ones) and
    along a random unit direction. ``eps``, ``rtol``, ``atol`` are used as given; left out,
    they default by precision: float64 eps 1e-6, rtol 1e-5, atol 1e-7; float32 rtol 2e-2,
    atol 1e-3, with the differences taken in float64. A tuple, list or dict argument is checked
    leaf by leaf (an error names the leaf: ``params['W1']``). ``order=2`` also checks second derivatives (see ``gradgradcheck``;
    given tolerances apply to both). ``gradcheck(MyFn.apply, inputs)`` checks the
    hand-written ``backward`` of a custom Function.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x, k):
    ...     return np.sum(np.tanh(k * x))
    >>> adcompile.gradcheck(f, (np.array([0.1, -0.4, 0.7]), 1.5))  # with respect to x and k
    True
    >>> adcompile.gradcheck(f, (np.array([0.1, -0.4, 0.7]), 1.5), wrt=0, order=2)
    True
    """
    if function_of(f) is not None:  # gradcheck(MyFn.apply, inputs): a hand-written backward, as in PyTorch
        return check_backward(function_of(f), args, wrt, eps, rtol, atol, max_elementwise, seed)
    if order == 2:
        gradcheck(f, args, wrt, eps, rtol, atol, max_elementwise, seed)
        return gradgradcheck(f, args, wrt, rtol=rtol, atol=atol, seed=seed)
    if order != 1:
        raise ValueError("gradcheck: order must be 1 or 2")
    compiled = compiled_function(f)
    args = list(args)
    names = compiled.param_names
    wrt = _float_args(args) if wrt is None else (wrt if isinstance(wrt, tuple) else (wrt,))
    wrt = tuple(names.index(k) if isinstance(k, str) else k for k in wrt)
    grads = derived_function(compiled, "grad", wrt)(*args)
    rng = np.random.default_rng(seed)
    if any(is_container(args[k]) for k in wrt):  # a pytree argument: each leaf checked by its path
        compiled, args, wrt, grads, names = _by_leaves(compiled, args, wrt, grads, names)
    for position, k in enumerate(wrt):
        step, r_tol, a_tol = tolerances(FIRST_ORDER, [args[k]], eps, rtol, atol)
        check_gradient(compiled, args, k, grads[position], names[k], step, r_tol, a_tol, max_elementwise, rng)
    return True


def _by_leaves(compiled, args, wrt, grads, names):
    """The check of gradients with respect to pytree arguments as one of their leaves: (a
    function of the flat leaves, the leaves, the flat wrt, the flat gradients, the leaves' names)."""
    flat_args, flat_names, rebuild, flat_wrt, flat_grads = [], [], [], [], []
    for k, value in enumerate(args):
        leaves, treedef = flatten(value) if is_container(value) else ([value], None)
        paths = treedef.paths() if treedef is not None else [()]
        start = len(flat_args)
        flat_args += leaves
        flat_names += [path_text(names[k], path) for path in paths]
        rebuild.append((start, len(leaves), treedef))
        if k in wrt:
            gradient = grads[wrt.index(k)]
            flat_wrt += range(start, start + len(leaves))
            flat_grads += flatten(gradient)[0] if treedef is not None else [gradient]

    def of_leaves(*leaves):
        return compiled(*[treedef.unflatten(leaves[start:start + n]) if treedef is not None else leaves[start]
                          for start, n, treedef in rebuild])
    return of_leaves, flat_args, tuple(flat_wrt), flat_grads, flat_names


def _float_args(args):
    return tuple(k for k, a in enumerate(args) if is_container(a) or
                 isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


@api_boundary
def gradgradcheck(f, args, wrt=None, eps=None, rtol=None, atol=None, seed=0, directions=3):
    """Check second derivatives of scalar ``f`` at ``args``: Hessian-vector products computed
    by adcompile (forward over reverse) against central differences of adcompile's gradient,
    along random directions (``np.allclose`` with ``rtol``, ``atol``). Tolerances are used as
    given; left out, they default by precision: float64 eps 1e-5, rtol 1e-4, atol 1e-6;
    float32 eps 1e-2, rtol 5e-2, atol 1e-2. Returns True or raises GradcheckError.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x):
    ...     return np.sum(np.exp(x) * x)
    >>> adcompile.gradgradcheck(f, (np.array([0.2, -1.0]),))
    True
    """
    if function_of(f) is not None:  # gradgradcheck(MyFn.apply, inputs), as in PyTorch
        return check_double_backward(function_of(f), args, wrt, seed=seed, eps=eps, rtol=rtol, atol=atol)
    compiled = compiled_function(f)
    args = list(args)
    names = compiled.param_names
    wrt = _float_args(args) if wrt is None else (wrt if isinstance(wrt, tuple) else (wrt,))
    wrt = tuple(names.index(k) if isinstance(k, str) else k for k in wrt)
    eps, rtol, atol = tolerances(SECOND_ORDER, [args[k] for k in wrt], eps, rtol, atol)
    gradient = derived_function(compiled, "grad", wrt)
    check_hessian_vector_products(lambda tangents: hvp(compiled, tuple(args), tangents), gradient,
                                  args, wrt, names, eps, rtol, atol, np.random.default_rng(seed), directions)
    return True


__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]
