"""Comparing derivatives with finite differences, at the tolerances the caller gives.

A derivative ``g`` passes where ``|g - fd| <= atol + rtol * |fd|`` for every element checked
(``fd`` the central difference), and along one random unit direction, where the relative
part is taken of the larger of ``|fd|`` and the sum of the absolute terms ``|g_i d_i|`` (a
directional derivative can cancel to near zero while its terms, and their rounding, do
not). The differences for a float32 argument are taken of the same function called with it
in float64 (specialised for float64), so they measure the float32 derivative's own error.
The defaults depend on the argument's dtype, since float32 arithmetic limits how well its
derivative can agree:

    first order   float64: eps 1e-6, rtol 1e-5, atol 1e-7    float32: eps 1e-6, rtol 2e-2, atol 1e-3
    second order  float64: eps 1e-5, rtol 1e-4, atol 1e-6    float32: eps 1e-2, rtol 5e-2, atol 1e-2

Given values are used as they are (``rtol=0`` means exact agreement up to ``atol``).
"""
import numpy as np

from ..errors import GradcheckError

FIRST_ORDER = {"f8": dict(eps=1e-6, rtol=1e-5, atol=1e-7), "f4": dict(eps=1e-6, rtol=2e-2, atol=1e-3)}
SECOND_ORDER = {"f8": dict(eps=1e-5, rtol=1e-4, atol=1e-6), "f4": dict(eps=1e-2, rtol=5e-2, atol=1e-2)}


def is_single(value):
    return value.dtype == np.float32 if isinstance(value, np.ndarray) else isinstance(value, np.float32)


def tolerances(table, values, eps, rtol, atol):
    """(eps, rtol, atol): the given ones, the others the defaults for ``values``' precision
    (float32 if any of them is float32)."""
    defaults = table["f4" if any(is_single(v) for v in values) else "f8"]
    return tuple(defaults[name] if given is None else given
                 for name, given in (("eps", eps), ("rtol", rtol), ("atol", atol)))


def _perturbed(args, k, delta):
    out = list(args)
    x = args[k]
    if isinstance(x, np.ndarray):
        out[k] = (x.astype(np.float64) + delta).astype(x.dtype)
    else:
        out[k] = float(x) + float(delta)
    return out


def numerical_directional(f, args, k, direction, eps):
    plus = f(*_perturbed(args, k, eps * direction))
    minus = f(*_perturbed(args, k, -eps * direction))
    return (float(np.sum(plus)) - float(np.sum(minus))) / (2 * eps)


def check_gradient(f, args, k, gradient, name, eps, rtol, atol, max_elementwise, rng):
    """Check ``gradient`` (of scalar ``f`` with respect to argument ``k``) elementwise, for at
    most ``max_elementwise`` elements (a random sample of a larger argument), and along one
    random unit direction."""
    x = args[k]
    shape = np.shape(x)
    args = _in_float64(args, k)
    g = np.asarray(gradient, dtype=np.float64)
    if g.shape != shape:
        raise GradcheckError(f"gradient of argument '{name}' has shape {g.shape}, expected {shape}")
    direction = rng.standard_normal(shape)
    direction = direction / max(float(np.sqrt(np.sum(direction ** 2))), 1e-300)
    numeric = numerical_directional(f, args, k, direction, eps)
    analytic = float(np.sum(g * direction))
    size = float(np.sum(np.abs(g * direction)))
    if abs(analytic - numeric) > atol + rtol * max(abs(numeric), size):
        raise GradcheckError(f"argument '{name}': directional derivative {analytic!r} (adcompile) "
                             f"!= {numeric!r} (finite differences), rtol={rtol}, atol={atol}")
    indices = list(np.ndindex(*shape)) if shape else [()]
    if len(indices) > max_elementwise:
        chosen = rng.choice(len(indices), size=max_elementwise, replace=False)
        indices = [indices[i] for i in sorted(chosen)]
    worst = None
    for index in indices:
        e = np.zeros(shape)
        e[index] = 1.0
        num = numerical_directional(f, args, k, e, eps)
        err = abs(num - g[index]) - (atol + rtol * abs(num))
        if err > 0 and (worst is None or err > worst[0]):
            worst = (err, index, g[index], num)
    if worst is not None:
        raise GradcheckError(f"argument '{name}' at index {worst[1]}: adcompile {worst[2]!r} != "
                             f"finite differences {worst[3]!r} (rtol={rtol}, atol={atol})")


def _in_float64(args, k):
    """``args`` with a float32 argument ``k`` in float64: the differences are taken of the same
    function specialised for float64, whose rounding error is far below float32 tolerances."""
    if not is_single(args[k]):
        return args
    out = list(args)
    out[k] = args[k].astype(np.float64) if isinstance(args[k], np.ndarray) else float(args[k])
    return out


def check_hessian_vector_products(hvp_of, gradient, args, wrt, names, eps, rtol, atol, rng, directions):
    """Hessian-vector products ``hvp_of(tangents)`` against central differences of
    ``gradient`` along random directions."""
    for _ in range(directions):
        direction = [rng.standard_normal(np.shape(args[k])) if np.ndim(args[k]) else float(rng.standard_normal())
                     for k in wrt]
        tangents = [None] * len(args)
        for k, d in zip(wrt, direction):
            tangents[k] = d
        analytic = hvp_of(tuple(tangents))
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
                                     f"gradient); worst difference {error} (rtol={rtol}, atol={atol})")


__all__ = ["FIRST_ORDER", "SECOND_ORDER", "GradcheckError", "check_gradient", "check_hessian_vector_products",
           "numerical_directional", "tolerances"]
