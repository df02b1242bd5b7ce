"""Handlers for special functions and predicates (see ``calls.py``): np.sinc, np.heaviside,
np.nan_to_num, np.all/np.any (and the array methods), the ``scipy.special`` functions
(resolved by ``scipy_special.py``). The ``math`` ones (erf, erfc, lgamma, gamma) are exactly
one primitive each and need nothing here (``ir/primitives/numeric/special.py``).

Most are lowered onto existing primitives, so their derivatives of every order come for free:
``logit(p)`` is ``log(p) - log1p(-p)``, ``softmax`` and ``logsumexp`` subtract the maximum
first (no overflow), ``sinc`` switches to its Taylor polynomial near 0 (exact value and
derivatives there, no 0/0).
"""
import math

from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ...ir.nodes import Const
from ...ir.primitives import PRIMITIVES
from ..calls import atom, handler, static_int, _take
from .reductions import _reduce
from ..values import NoneValue

_FLOAT_MAX = {"f8": 1.7976931348623157e308, "f4": 3.4028234663852886e38}
# sinc(x) = sum_k (-1)^k (pi x)^2k / (2k + 1)!: its Taylor coefficients in u = (pi x)^2, used for
# |x| < 0.01 (the next term is below 1e-22 there)
_SINC_SERIES = (1.0, -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0)
_SINC_SERIES_BOUND = 0.01


def _arguments(tr, args, kwargs, node, shown, names, defaults=None):
    """The arguments ``names`` (positional or keyword); anything else is an error naming it."""
    if len(args) > len(names):
        raise tr.error(f"{shown}() takes at most {len(names)} positional argument(s) in compiled code, "
                       f"{len(args)} given", node, UnsupportedFunctionError)
    for keyword in kwargs:
        if keyword not in names[len(args):]:
            raise tr.error(f"keyword argument '{keyword}' of {shown}() is not supported by adcompile", node,
                           UnsupportedFunctionError)
    if not args and names[0] not in kwargs:
        raise tr.error(f"{shown}() needs arguments", node, UnsupportedFunctionError)
    return _take(args, kwargs, names, defaults)


def _is_given(value):
    return value is not None and not isinstance(value, NoneValue)


def _static_flag(tr, value, node, what):
    if not _is_given(value):
        return False
    if isinstance(value, Const):
        return bool(value.value)
    raise tr.error(f"{what} must be a constant True or False", node, TypeMismatchError)


def _horner(tr, u, coefficients, node):
    result = const(coefficients[-1])
    for c in reversed(coefficients[:-1]):
        result = tr.emit("add", [const(c), tr.emit("mul", [u, result], node)], node)
    return result


@handler("np.sinc")
def _sinc(tr, args, kwargs, node):
    """sin(pi x) / (pi x), 1 at 0; near 0 its Taylor polynomial (whose derivatives are right)."""
    x = atom(tr, _arguments(tr, args, kwargs, node, "sinc", ["x"])[0], node)
    near_zero = tr.emit("lt", [tr.emit("abs", [x], node), const(_SINC_SERIES_BOUND)], node)
    pi_x = tr.emit("mul", [x, const(math.pi)], node)
    series = _horner(tr, tr.emit("mul", [pi_x, pi_x], node), _SINC_SERIES, node)
    # pi x, but 1 where the series is used: no 0/0 in the branch not taken
    safe_pi_x = tr.emit("where", [near_zero, _float(tr, 1.0, pi_x.type.dtype, node), pi_x], node)
    quotient = tr.emit("div", [tr.emit("sin", [safe_pi_x], node), safe_pi_x], node)
    return tr.emit("where", [near_zero, series, quotient], node)


@handler("np.heaviside")
def _heaviside(tr, args, kwargs, node):
    """0 for x < 0, h0 at 0, 1 for x > 0 (nan stays nan): piecewise constant in x."""
    x, h0 = _arguments(tr, args, kwargs, node, "heaviside", ["x1", "x2"])
    if h0 is None:
        raise tr.error("heaviside() needs two arguments (x and the value at 0)", node, UnsupportedFunctionError)
    x, h0 = atom(tr, x, node), atom(tr, h0, node)
    dtype = x.type.dtype if x.type.is_float else "f8"
    h0 = _float(tr, float(h0.value), dtype, node) if isinstance(h0, Const) else h0
    at_zero = tr.emit("where", [tr.emit("eq", [x, const(0)], node), h0, x], node)  # x: nan stays nan
    positive = tr.emit("where", [tr.emit("gt", [x, const(0)], node), _float(tr, 1.0, dtype, node), at_zero], node)
    return tr.emit("where", [tr.emit("lt", [x, const(0)], node), _float(tr, 0.0, dtype, node), positive], node)


def _float(tr, value, dtype, node):
    """The constant ``value`` as a float of ``dtype``: numba's np.where takes a literal such as
    0.0 for a float64 and would turn a float32 array into float64."""
    return tr.emit("as_dtype", [const(value)], node, dtype=dtype) if dtype == "f4" else const(value)


def _replacement(tr, value, default, dtype, node):
    if not _is_given(value):
        return _float(tr, default, dtype, node)
    value = atom(tr, value, node)
    return _float(tr, float(value.value), dtype, node) if isinstance(value, Const) else value


@handler("np.nan_to_num")
def _nan_to_num(tr, args, kwargs, node):
    """nan, inf and -inf replaced; the derivative is 1 where x is finite, 0 elsewhere (and that
    of the replacement values where they are used)."""
    x, copy, nan, posinf, neginf = _arguments(tr, args, kwargs, node, "nan_to_num",
                                              ["x", "copy", "nan", "posinf", "neginf"])
    x = atom(tr, x, node)
    if _is_given(copy) and not _static_flag(tr, copy, node, "copy"):
        raise tr.error("nan_to_num(copy=False) writes into its argument: not supported in compiled code "
                       "(use the result)", node, UnsupportedFunctionError)
    if not x.type.is_float:
        return x
    largest = _FLOAT_MAX[x.type.dtype]
    nan, posinf, neginf = (_replacement(tr, value, default, x.type.dtype, node)
                           for value, default in ((nan, 0.0), (posinf, largest), (neginf, -largest)))
    result = tr.emit("where", [tr.emit("eq", [x, const(-math.inf)], node), neginf, x], node)
    result = tr.emit("where", [tr.emit("eq", [x, const(math.inf)], node), posinf, result], node)
    return tr.emit("where", [tr.emit("ne", [x, x], node), nan, result], node)  # x != x: nan


def _truth_reduction(which):
    """np.all / np.any (and the methods), with ``axis`` and ``keepdims``: a count of the false
    elements (all: none) or of the true ones (any: at least one). Boolean, no derivative."""
    def fn(tr, args, kwargs, node):
        x, axis, keepdims = _arguments(tr, args, kwargs, node, which, ["a", "axis", "keepdims"])
        x = atom(tr, x, node)
        keep = _static_flag(tr, keepdims, node, "keepdims")
        truth = x if x.type.dtype == "b1" else tr.emit("ne", [x, const(0)], node)
        if x.type.ndim == 0:
            return truth
        counted = truth if which == "any" else tr.emit("not", [truth], node)
        count = _reduce(tr, "sum", counted, axis, keep, node)
        return tr.emit("gt" if which == "any" else "eq", [count, const(0)], node)
    return fn


for _which in ("all", "any"):
    handler("np." + _which, "method." + _which)(_truth_reduction(_which))


# ------------------------------------------------------------------ scipy.special
def _unary_special(prim, name=None, **params):
    def fn(tr, args, kwargs, node):
        shown = "scipy.special." + (name or prim)
        x = _arguments(tr, args, kwargs, node, shown, ["x"])[0]
        return tr.emit(prim, [atom(tr, x, node)], node, **params)
    return fn


# the scipy.special functions that are exactly one primitive, declared with it (``scipy=`` in ir/primitives/)
for _spec in list(PRIMITIVES.values()):
    for _name in _spec.scipy_names:
        handler("scipy.special." + _name)(_unary_special(_spec.name, _name))
handler("scipy.special.digamma", "scipy.special.psi")(_unary_special("polygamma", order=0))


@handler("scipy.special.polygamma")
def _polygamma(tr, args, kwargs, node):
    n, x = _arguments(tr, args, kwargs, node, "scipy.special.polygamma", ["n", "x"])
    order = static_int(tr, n, node, "polygamma's order n")
    if order < 0:
        raise tr.error("polygamma's order n must be non-negative", node, TypeMismatchError)
    return tr.emit("polygamma", [atom(tr, x, node)], node, order=order)


@handler("scipy.special.logit")
def _logit(tr, args, kwargs, node):
    p = atom(tr, _arguments(tr, args, kwargs, node, "scipy.special.logit", ["x"])[0], node)
    return tr.emit("sub", [tr.emit("log", [p], node), tr.emit("log1p", [tr.emit("neg", [p], node)], node)], node)


@handler("scipy.special.xlogy")
def _xlogy(tr, args, kwargs, node):
    x, y = _arguments(tr, args, kwargs, node, "scipy.special.xlogy", ["x", "y"])
    return tr.binop("xlogy", x, y, node)


def _shifted_by_max(tr, x, axis, node):
    """``x - max(x)`` along ``axis`` (kept as size-1 axes) and that maximum; an infinite or nan
    maximum is replaced by 0, so that an all -inf group does not become -inf - -inf = nan."""
    largest = _reduce(tr, "max", x, axis, _is_given(axis), node)
    finite = tr.emit("lt", [tr.emit("abs", [largest], node), const(math.inf)], node)
    largest = tr.emit("where", [finite, largest, _float(tr, 0.0, x.type.dtype, node)], node)
    return tr.emit("sub", [x, largest], node), largest


def _array_and_axis(tr, args, kwargs, node, name, names):
    values = _arguments(tr, args, kwargs, node, "scipy.special." + name, names)
    x = atom(tr, values[0], node)
    if x.type.ndim == 0:
        raise tr.error(f"scipy.special.{name} needs an array", node, TypeMismatchError)
    return x, values[1], values[2:]


@handler("scipy.special.logsumexp")
def _logsumexp(tr, args, kwargs, node):
    x, axis, (keepdims,) = _array_and_axis(tr, args, kwargs, node, "logsumexp", ["a", "axis", "keepdims"])
    keep = _static_flag(tr, keepdims, node, "keepdims")
    shifted, largest = _shifted_by_max(tr, x, axis, node)
    total = _reduce(tr, "sum", tr.emit("exp", [shifted], node), axis, keep, node)
    if _is_given(axis) and not keep:
        largest = _reduce(tr, "sum", largest, axis, False, node)  # drops its size-1 axes
    return tr.emit("add", [tr.emit("log", [total], node), largest], node)


@handler("scipy.special.softmax")
def _softmax(tr, args, kwargs, node):
    x, axis, _ = _array_and_axis(tr, args, kwargs, node, "softmax", ["x", "axis"])
    weights = tr.emit("exp", [_shifted_by_max(tr, x, axis, node)[0]], node)
    return tr.emit("div", [weights, _reduce(tr, "sum", weights, axis, _is_given(axis), node)], node)


@handler("scipy.special.log_softmax")
def _log_softmax(tr, args, kwargs, node):
    x, axis, _ = _array_and_axis(tr, args, kwargs, node, "log_softmax", ["x", "axis"])
    shifted = _shifted_by_max(tr, x, axis, node)[0]
    total = _reduce(tr, "sum", tr.emit("exp", [shifted], node), axis, _is_given(axis), node)
    return tr.emit("sub", [shifted, tr.emit("log", [total], node)], node)
