"""Reverse-mode rules: for each primitive, the cotangents of its inputs.

A rule is ``rule(b, g, out, args, params, active) -> [cotangent or None per arg]`` where
``b`` is an IR Builder appending to the backward sweep, ``g`` the cotangent of the output
``out``, and ``active[i]`` tells whether argument i needs a cotangent (rules skip the work
for the others). Rules build IR from ordinary primitives, so every derivative is itself
differentiable. For primitives in ``BROADCASTING`` the transform sums each cotangent back to
its argument's shape; all other rules return cotangents of the argument's shape already.

``ScatterInto`` is returned by indexing rules whose cotangent is a write into a part of the
argument's adjoint (``bx[i, 1:] += g``) rather than a whole array.

Rules whose local derivative is genuinely infinite at a finite point (sqrt, log, a division,
``x ** 0.5``, arcsin, norm at 0) apply it with the zero-safe products ``div_nz``/``mul_nz`` (runtime/nonfinite.py): a
zero cotangent then gives a zero contribution, as a linear map must, instead of 0 * inf = nan.
This is what makes ``np.where(d2 > 0, np.sqrt(d2), 0.0)`` differentiable at ``d2 == 0``: the
branch that was not selected receives a zero cotangent, and its infinite derivative stays out.
Derivatives that are infinite only by overflow (exp at 800) keep plain products: there the zero
cotangent is usually an underflow, and nan is the honest answer.
Forward rules reuse these rules (rules/jvp.py), so a zero tangent is safe in the same way.
"""
import math

from ..ir.builder import const
from ..ir.nodes import Const

VJP_RULES = {}

# Primitives whose output does not depend differentiably on their inputs (piecewise constant,
# integer- or bool-valued, or only shape-dependent): their outputs are never active.
NON_DIFFERENTIABLE = {
    "lt", "le", "gt", "ge", "eq", "ne", "not", "and", "or", "sign", "floor", "ceil", "round",
    "floordiv", "dim", "size", "to_int", "zeros", "ones", "empty", "zeros_like", "ones_like",
    "arange", "linspace", "eye", "placeholder", "new_tape", "range_len", "argmax", "argmin", "argsort",
}

BROADCASTING = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "arctan2", "logaddexp", "where",
                "clip", "mod", "mul_nz", "div_nz"}


class ScatterInto:
    def __init__(self, items, value):
        self.items, self.value = items, value


def rule(*names):
    def register(fn):
        for name in names:
            VJP_RULES[name] = fn
        return fn
    return register


def _zero_where(b, mask, g, keep_when_true=True):
    zero = const(0.0)
    return b.call("where", mask, g, zero) if keep_when_true else b.call("where", mask, zero, g)


# --------------------------------------------------------------- arithmetic
@rule("add")
def _add(b, g, out, args, params, active):
    return [g, g]


@rule("sub")
def _sub(b, g, out, args, params, active):
    return [g, b.neg(g) if active[1] else None]


@rule("mul")
def _mul(b, g, out, args, params, active):
    x, y = args
    return [b.mul(g, y) if active[0] else None, b.mul(g, x) if active[1] else None]


def _is_nonzero_constant(atom):
    return isinstance(atom, Const) and isinstance(atom.value, (int, float)) and atom.value != 0


def _div_by(b, g, denominator):
    """g / denominator, zero where g is zero (plain division by a non-zero constant)."""
    return b.div(g, denominator) if _is_nonzero_constant(denominator) else b.call("div_nz", g, denominator)


@rule("div")
def _div(b, g, out, args, params, active):
    # d(x/y)/dy = -(x/y) / y, applied as -(g / y) * out: zero for a zero g even where y == 0
    x, y = args
    g_over_y = _div_by(b, g, y)
    gx = g_over_y if active[0] else None
    if active[1]:
        gy = b.neg(b.mul(g_over_y, out) if _is_nonzero_constant(y) else b.call("mul_nz", g_over_y, out))
    else:
        gy = None
    return [gx, gy]


@rule("mul_nz")
def _mul_nz(b, g, out, args, params, active):
    # mul_nz(a, d) is a * d, and 0 along d where a == 0: its adjoints are zero-safe too
    a, d = args
    return [b.call("mul_nz", g, d) if active[0] else None, b.mul(g, a) if active[1] else None]


@rule("div_nz")
def _div_nz(b, g, out, args, params, active):
    a, d = args
    g_over_d = b.call("div_nz", g, d)
    return [g_over_d if active[0] else None,
            b.neg(b.call("mul_nz", g_over_d, out)) if active[1] else None]


def _finite_power_derivative(exponent):
    """Whether d/dx x**exponent = exponent * x**(exponent - 1) is finite for every finite x."""
    return isinstance(exponent, Const) and isinstance(exponent.value, (int, float)) and \
        (exponent.value >= 1 or exponent.value == 0)


@rule("pow")
def _pow(b, g, out, args, params, active):
    x, y = args
    gx = gy = None
    if active[0] and _finite_power_derivative(y):
        gx = b.mul(g, b.mul(y, b.call("pow", x, b.sub(y, const(1.0)))))
    elif active[0]:
        # y * x**(y - 1) is infinite at x == 0 for y < 1: apply it as (g * y) / x**(1 - y)
        gx = b.call("div_nz", b.mul(g, y), b.call("pow", x, b.sub(const(1.0), y)))
    if active[1]:
        # x**y * log(x): log(0) = -inf, where x**y = 0 for y > 0
        gy = b.call("mul_nz", b.mul(g, out), b.call("log", x))
    return [gx, gy]


@rule("mod")
def _mod(b, g, out, args, params, active):
    x, y = args
    gy = b.neg(b.mul(g, b.call("floor", b.div(x, y)))) if active[1] else None
    return [g, gy]


@rule("neg")
def _neg(b, g, out, args, params, active):
    return [b.neg(g)]


# --------------------------------------------------------------- elementary functions
def _unary(name):
    def register(fn):
        VJP_RULES[name] = lambda b, g, out, args, params, active: [fn(b, g, out, args[0])]
        return fn
    return register


@_unary("sin")
def _sin(b, g, out, x):
    return b.mul(g, b.call("cos", x))


@_unary("cos")
def _cos(b, g, out, x):
    return b.neg(b.mul(g, b.call("sin", x)))


@_unary("tan")
def _tan(b, g, out, x):
    return b.mul(g, b.add(const(1.0), b.mul(out, out)))


@_unary("arcsin")
def _arcsin(b, g, out, x):
    return b.call("div_nz", g, b.call("sqrt", b.sub(const(1.0), b.mul(x, x))))


@_unary("arccos")
def _arccos(b, g, out, x):
    return b.neg(b.call("div_nz", g, b.call("sqrt", b.sub(const(1.0), b.mul(x, x)))))


@_unary("arctan")
def _arctan(b, g, out, x):
    return b.div(g, b.add(const(1.0), b.mul(x, x)))


@_unary("sinh")
def _sinh(b, g, out, x):
    return b.mul(g, b.call("cosh", x))


@_unary("cosh")
def _cosh(b, g, out, x):
    return b.mul(g, b.call("sinh", x))


@_unary("tanh")
def _tanh(b, g, out, x):
    return b.mul(g, b.sub(const(1.0), b.mul(out, out)))


@_unary("exp")
def _exp(b, g, out, x):
    # A plain product: out = inf is an overflow, not an infinite derivative, and the cotangent
    # reaching it is often an underflowed 1 / inf (naive softplus log(1 + exp(800))); 0 * inf
    # must stay nan there rather than become a silently wrong 0.
    return b.mul(g, out)


@_unary("expm1")
def _expm1(b, g, out, x):
    return b.mul(g, b.add(out, const(1.0)))


@_unary("log")
def _log(b, g, out, x):
    return b.call("div_nz", g, x)


@_unary("log1p")
def _log1p(b, g, out, x):
    return b.call("div_nz", g, b.add(const(1.0), x))


@_unary("log2")
def _log2(b, g, out, x):
    return b.call("div_nz", g, b.mul(x, const(math.log(2.0))))


@_unary("log10")
def _log10(b, g, out, x):
    return b.call("div_nz", g, b.mul(x, const(math.log(10.0))))


@_unary("sqrt")
def _sqrt(b, g, out, x):
    return b.call("div_nz", g, b.mul(const(2.0), out))  # inf at 0, but 0 for a zero g


@_unary("abs")
def _abs(b, g, out, x):
    return b.mul(g, b.call("sign", x))


def _extremum_rule(comparison):
    def rule_(b, g, out, args, params, active):
        x, y = args
        mask = b.call(comparison, x, y)
        return [_zero_where(b, mask, g) if active[0] else None,
                _zero_where(b, mask, g, keep_when_true=False) if active[1] else None]
    return rule_


VJP_RULES["maximum"] = _extremum_rule("ge")
VJP_RULES["minimum"] = _extremum_rule("le")


@rule("logaddexp")
def _logaddexp(b, g, out, args, params, active):
    # d/da log(e^a + e^b) = e^(a - out): a softmax weight, exact where a and b tie
    return [b.mul(g, b.call("exp", b.sub(a, out))) if is_active else None
            for a, is_active in zip(args, active)]


@rule("arctan2")
def _arctan2(b, g, out, args, params, active):
    y, x = args
    denom = b.add(b.mul(x, x), b.mul(y, y))
    return [b.call("div_nz", b.mul(g, x), denom) if active[0] else None,
            b.neg(b.call("div_nz", b.mul(g, y), denom)) if active[1] else None]


@rule("where")
def _where(b, g, out, args, params, active):
    cond = args[0]
    return [None, _zero_where(b, cond, g) if active[1] else None,
            _zero_where(b, cond, g, keep_when_true=False) if active[2] else None]


@rule("clip")
def _clip(b, g, out, args, params, active):
    x, lo, hi = args
    inside = b.call("and", b.call("ge", x, lo), b.call("le", x, hi))
    return [_zero_where(b, inside, g) if active[0] else None,
            _zero_where(b, b.call("lt", x, lo), g) if active[1] else None,
            _zero_where(b, b.call("gt", x, hi), g) if active[2] else None]


# --------------------------------------------------------------- identities and casts
@rule("alias", "copy", "to_float")
def _identity(b, g, out, args, params, active):
    return [g]


@rule("as_dtype")
def _as_dtype(b, g, out, args, params, active):
    return [b.call("cast_like", g, args[0])]


@rule("cast_like")
def _cast_like(b, g, out, args, params, active):
    return [b.call("cast_like", g, args[0]), None]


@rule("full")
def _full(b, g, out, args, params, active):
    return [None] * (len(args) - 1) + [b.call("sum", g)]


# --------------------------------------------------------------- reductions
def _spread(b, g, x, axis):
    """``g`` (a reduction of x over ``axis``) broadcast back to x's shape."""
    if axis is not None:
        g = b.call("expand_axis", g, axis=axis)
    return b.call("broadcast_to_shape", g, x)


def _count(b, x, axis):
    n = b.call("size", x) if axis is None else b.call("dim", x, axis=axis)
    return b.call("to_float", n)


@rule("sum")
def _sum(b, g, out, args, params, active):
    return [_spread(b, g, args[0], params.get("axis"))]


@rule("mean")
def _mean(b, g, out, args, params, active):
    x, axis = args[0], params.get("axis")
    return [_spread(b, b.div(g, _count(b, x, axis)), x, axis)]


@rule("prod")
def _prod(b, g, out, args, params, active):
    # d prod / d x_i is the product of the other entries. Dividing out by x_i fails at zeros,
    # so with zero_i = (x_i == 0) and n the zero count of x_i's reduction group:
    # n == 0: out / x_i; n == 1: the product of the non-zeros at the zero, 0 elsewhere;
    # n >= 2: 0. All masks are 0/1 floats: no division by zero, no nan.
    x, axis = args[0], params.get("axis")
    by_axis = {} if axis is None else {"axis": axis}
    zero = b.call("as_dtype", b.call("eq", x, const(0.0)), dtype=x.type.dtype)
    safe = b.add(x, zero)
    count = b.call("sum", zero, **by_axis)
    none = b.call("as_dtype", b.call("eq", count, const(0.0)), dtype=x.type.dtype)
    one = b.call("as_dtype", b.call("eq", count, const(1.0)), dtype=x.type.dtype)
    regular = b.div(_spread(b, b.mul(none, out), x, axis), safe)
    at_zero = b.mul(zero, _spread(b, b.mul(one, b.call("prod", safe, **by_axis)), x, axis))
    return [b.mul(_spread(b, g, x, axis), b.add(regular, at_zero))]


@rule("max", "min")
def _max(b, g, out, args, params, active):
    # The cotangent is shared equally among the positions that attain the extremum.
    x, axis = args[0], params.get("axis")
    extremum = _spread(b, out, x, axis)
    mask = b.call("eq", x, extremum)
    count = b.call("to_float", b.call("sum", mask)) if axis is None else \
        _spread(b, b.call("sum", mask, axis=axis), x, axis)
    share = b.div(_spread(b, g, x, axis), count)
    return [_zero_where(b, mask, share)]


@rule("norm")
def _norm(b, g, out, args, params, active):
    # x / |x| * g; at x == 0 the subgradient 0 (as PyTorch), not 0 * inf = nan
    scale = b.call("where", b.call("eq", out, const(0.0)), const(0.0), b.call("div_nz", g, out))
    return [b.mul(scale, args[0])]


@rule("cumsum")
def _cumsum(b, g, out, args, params, active):
    x = args[0]
    ct = b.call("cumsum_adjoint", g)
    if x.type.ndim != 1:
        ct = b.call("reshape", ct, *[b.call("dim", x, axis=k) for k in range(x.type.ndim)])
    return [ct]


# --------------------------------------------------------------- linear algebra
@rule("matmul")
def _matmul(b, g, out, args, params, active):
    a, c = args
    kind = (a.type.ndim, c.type.ndim)
    ga = gc = None
    if kind == (1, 1):
        ga = b.mul(g, c) if active[0] else None
        gc = b.mul(g, a) if active[1] else None
    elif kind == (2, 1):
        ga = b.call("outer", g, c) if active[0] else None
        gc = b.call("matmul", b.call("transpose", a), g) if active[1] else None
    elif kind == (1, 2):
        ga = b.call("matmul", c, g) if active[0] else None
        gc = b.call("outer", a, g) if active[1] else None
    else:
        ga = b.call("matmul", g, b.call("transpose", c)) if active[0] else None
        gc = b.call("matmul", b.call("transpose", a), g) if active[1] else None
    return [ga, gc]


@rule("outer")
def _outer(b, g, out, args, params, active):
    a, c = args
    return [b.call("matmul", g, c) if active[0] else None,
            b.call("matmul", b.call("transpose", g), a) if active[1] else None]


@rule("transpose")
def _transpose(b, g, out, args, params, active):
    axes = params.get("axes")
    if axes is None:
        return [b.call("transpose", g)]
    inverse = tuple(sorted(range(len(axes)), key=lambda k: axes[k]))
    return [b.call("transpose", g, axes=inverse)]


def _reshape_like(b, g, x):
    if x.type.ndim == 0:
        return b.call("sum", g)
    return b.call("reshape", g, *[b.call("dim", x, axis=k) for k in range(x.type.ndim)])


@rule("reshape", "ravel")
def _reshape(b, g, out, args, params, active):
    return [_reshape_like(b, g, args[0])] + [None] * (len(args) - 1)


@rule("expand_axis")
def _expand_axis(b, g, out, args, params, active):
    if args[0].type.ndim == 0:
        return [b.call("sum", g)]
    return [b.call("sum", g, axis=params["axis"])]


@rule("broadcast_to_shape")
def _broadcast_to_shape(b, g, out, args, params, active):
    return [b.call("unbroadcast", g, args[0]), None]


@rule("unbroadcast")
def _unbroadcast(b, g, out, args, params, active):
    return [b.call("broadcast_to_shape", g, args[0]), None]


@rule("diag")
def _diag(b, g, out, args, params, active):
    return [b.call("diag_adjoint", g, args[0])]


@rule("diag_adjoint")
def _diag_adjoint(b, g, out, args, params, active):
    return [b.call("diag", g), None]


@rule("cumsum_adjoint")
def _cumsum_adjoint(b, g, out, args, params, active):
    # cumsum_adjoint is linear with the transposed matrix of cumsum.
    return [b.call("cumsum", g)]


@rule("trace")
def _trace(b, g, out, args, params, active):
    x = args[0]
    return [b.call("diag_adjoint", b.call("broadcast_to_shape", g, b.call("diag", x)), x)]


@rule("concatenate")
def _concatenate(b, g, out, args, params, active):
    axis = params["axis"]
    cts, offset = [], const(0)
    for arg, is_active in zip(args, active):
        end = b.add(offset, b.call("dim", arg, axis=axis))
        if is_active:
            index = [("slice", None, None, None)] * axis + [("slice", offset, end, None)]
            cts.append(getitem(b, g, index))
        else:
            cts.append(None)
        offset = end
    return cts


@rule("stack")
def _stack(b, g, out, args, params, active):
    axis = params["axis"]
    return [getitem(b, g, [("slice", None, None, None)] * axis + [("int", const(k))]) if is_active else None
            for k, is_active in enumerate(active)]


# --------------------------------------------------------------- indexing
def getitem(b, x, items):
    """Emit ``x[items]``; items are ('int', a) ('slice', a|None, b|None, c|None) ('none',) ('array', a)."""
    from ..frontend.indexing import index_params
    params, index_args = index_params(x.type, items)
    return b.emit("getitem", [x] + index_args, **params)


@rule("getitem")
def _getitem(b, g, out, args, params, active):
    from ..frontend.indexing import items_with_atoms
    items = items_with_atoms(params["items"], args)
    value = g
    if any(item[0] == "none" for item in items):
        squeeze = []
        for item in items:
            if item[0] == "none":
                squeeze.append(("int", const(0)))
            elif item[0] in ("slice", "array"):
                squeeze.append(("slice", None, None, None))
        value = getitem(b, g, squeeze)
    kept = [item for item in items if item[0] != "none"]
    return [ScatterInto(kept, value)] + [None] * (len(args) - 1)
