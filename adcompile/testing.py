"""Numerical checks of derivatives: ``gradcheck``.

The gradient computed by adcompile is compared with central finite differences, elementwise
for small inputs and along a random direction for all inputs. The check can fail: it raises
``GradcheckError`` naming the argument and the worst mismatch.
"""
import numpy as np

from .api import as_compiled, grad
from .derivatives import hvp
from .errors import GradcheckError
from .function_checks import check_backward, check_double_backward, function_of


def _perturbed(args, k, delta):
    out = list(args)
    x = args[k]
    if isinstance(x, np.ndarray):
        out[k] = (x.astype(np.float64) + delta).astype(x.dtype)
    else:
        out[k] = float(x) + float(delta)
    return out


def _scalar(value):
    return float(np.sum(value))


def numerical_directional(f, args, k, direction, eps):
    plus = f(*_perturbed(args, k, eps * direction))
    minus = f(*_perturbed(args, k, -eps * direction))
    return (_scalar(plus) - _scalar(minus)) / (2 * eps)


def gradcheck(f, args, wrt=None, eps=None, rtol=None, atol=None, max_elementwise=64, seed=0, order=1):
    """Check ``adcompile.grad(f, wrt)`` at ``args`` against central differences.

    ``f`` must return a float scalar. Returns True, or raises GradcheckError with the worst
    mismatch. Tolerances default by precision (float64: rtol 1e-5, atol 1e-7; float32 looser).
    ``order=2`` also checks second derivatives (see ``gradgradcheck``). ``gradcheck(MyFn.apply,
    inputs)`` checks the hand-written ``backward`` of a custom Function.

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
        return check_backward(function_of(f), args, wrt, eps or 1e-6, rtol or 1e-5, atol or 1e-7,
                              max_elementwise, seed)
    if order == 2:
        gradcheck(f, args, wrt, eps, rtol, atol, max_elementwise, seed)
        return gradgradcheck(f, args, wrt, seed=seed)
    if order != 1:
        raise ValueError("gradcheck: order must be 1 or 2")
    compiled = as_compiled(f)
    args = list(args)
    if wrt is None:
        wrt = _float_args(args)
    wrt_tuple = wrt if isinstance(wrt, tuple) else (wrt,)
    grads = grad(compiled, wrt=wrt_tuple)(*args)
    names = compiled.param_names
    rng = np.random.default_rng(seed)
    for position, k in enumerate(wrt_tuple):
        k = names.index(k) if isinstance(k, str) else k
        x = args[k]
        single = x.dtype == np.float32 if isinstance(x, np.ndarray) else isinstance(x, np.float32)
        step = eps or (1e-3 if single else 1e-6)
        r_tol = rtol or (2e-2 if single else 1e-5)
        a_tol = atol or (1e-3 if single else 1e-7)
        g = np.asarray(grads[position], dtype=np.float64)
        shape = np.shape(x)
        if g.shape != shape:
            raise GradcheckError(f"gradient of argument '{names[k]}' has shape {g.shape}, expected {shape}")
        direction = rng.standard_normal(shape)
        numeric = numerical_directional(compiled, args, k, direction, step)
        analytic = float(np.sum(g * direction))
        if not np.isclose(analytic, numeric, rtol=r_tol * 10, atol=a_tol * 10 * max(1.0, np.abs(direction).sum())):
            raise GradcheckError(f"argument '{names[k]}': directional derivative {analytic!r} (adcompile) "
                                 f"!= {numeric!r} (finite differences)")
        if np.size(x) <= max_elementwise:
            worst = None
            for index in np.ndindex(*shape) if shape else [()]:
                e = np.zeros(shape)
                e[index] = 1.0
                num = numerical_directional(compiled, args, k, e, step)
                err = abs(num - g[index]) - (a_tol + r_tol * abs(num))
                if err > 0 and (worst is None or err > worst[0]):
                    worst = (err, index, g[index], num)
            if worst is not None:
                raise GradcheckError(f"argument '{names[k]}' at index {worst[1]}: adcompile {worst[2]!r} != "
                                     f"finite differences {worst[3]!r}")
    return True


def _float_args(args):
    return tuple(k for k, a in enumerate(args)
                 if isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


def gradgradcheck(f, args, wrt=None, eps=1e-5, rtol=1e-4, atol=1e-6, seed=0, directions=3):
    """Check second derivatives of scalar ``f`` at ``args``: Hessian-vector products computed
    by adcompile (forward over reverse) against central differences of adcompile's gradient,
    along random directions. Returns True or raises GradcheckError.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x):
    ...     return np.sum(np.exp(x) * x)
    >>> adcompile.gradgradcheck(f, (np.array([0.2, -1.0]),))
    True
    """
    if function_of(f) is not None:  # gradgradcheck(MyFn.apply, inputs), as in PyTorch
        return check_double_backward(function_of(f), args, gradgradcheck, wrt, seed=seed, eps=eps, rtol=rtol,
                                     atol=atol)
    compiled = as_compiled(f)
    args = list(args)
    names = compiled.param_names
    wrt = _float_args(args) if wrt is None else (wrt if isinstance(wrt, tuple) else (wrt,))
    wrt = tuple(names.index(k) if isinstance(k, str) else k for k in wrt)
    gradient = grad(compiled, wrt=wrt)
    rng = np.random.default_rng(seed)
    for _ in range(directions):
        direction = [rng.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else float(rng.standard_normal())
                     for k in wrt]
        tangents = [None] * len(args)
        for k, d in zip(wrt, direction):
            tangents[k] = d
        analytic = hvp(compiled, tuple(args), tuple(tangents))
        analytic = analytic if len(wrt) > 1 else (analytic,)
        plus, minus = list(args), list(args)
        for k, d in zip(wrt, direction):
            plus[k] = args[k] + eps * d
            minus[k] = args[k] - eps * d
        g_plus, g_minus = gradient(*plus), gradient(*minus)
        for position, k in enumerate(wrt):
            numeric = (np.asarray(g_plus[position]) - np.asarray(g_minus[position])) / (2 * eps)
            value = np.asarray(analytic[position], dtype=np.float64)
            if value.shape != numeric.shape or not np.allclose(value, numeric, rtol=rtol, atol=atol):
                error = np.max(np.abs(value - numeric)) if value.shape == numeric.shape else "shape"
                raise GradcheckError(f"second derivative for argument '{names[k]}': Hessian-vector product "
                                     f"{value!r} (adcompile) != {numeric!r} (finite differences of the "
                                     f"gradient); worst difference {error}")
    return True
