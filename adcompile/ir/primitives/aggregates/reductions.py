"""Reductions (sum, mean, prod, max, min, norm), index-valued reductions (argmax, argmin,
argsort) and cumulative sums. ``axis`` is None (everything, a scalar result) or one
non-negative int."""
from ...nodes import const
from ...types import INT64, Type, to_float
from ..batching_rules import reduction_batch, unbatched_view
from ..declare import C_ORDERED_RESULT, FRESH, NON_DIFFERENTIABLE, REDUCTION, RULE_ONLY, Accumulator, define
from ..reverse_helpers import spread, zero_safe_scale, zero_where
from ..structural_jvp import weighted_reduction_jvp
from ..shape_rules import flattened, same_as_argument
from ..type_rules import float_reduction, reduction, same_as_first

_REDUCTION = {REDUCTION, FRESH}
_SUMMED = Accumulator(0.0)  # a fused loop adds each element into an accumulator starting at 0


def _count(b, x, axis):
    n = b.call("size", x) if axis is None else b.call("dim", x, axis=axis)
    return b.call("to_float", n)


def _by_axis(name):
    return lambda t, p: f"np.{name}(_0)" if p.get("axis") is None else f"rt.{name}_axis(_0, {{axis}})"


def _sum_vjp(b, g, out, args, params, active):
    return [spread(b, g, args[0], params.get("axis"))]


def _mean_vjp(b, g, out, args, params, active):
    x, axis = args[0], params.get("axis")
    return [spread(b, b.div(g, _count(b, x, axis)), x, axis)]


define("sum", reduction, _by_axis("sum"), kinds=_REDUCTION, vjp=_sum_vjp, linear_in=(0,), accumulator=_SUMMED,
       reduces=("sum",))
define("mean", float_reduction, _by_axis("mean"), kinds=_REDUCTION, vjp=_mean_vjp, linear_in=(0,),
       accumulator=_SUMMED, reduces=("mean",))


def _prod_vjp(b, g, out, args, params, active):
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
    regular = b.div(spread(b, b.mul(none, out), x, axis), safe)
    at_zero = b.mul(zero, spread(b, b.mul(one, b.call("prod", safe, **by_axis)), x, axis))
    return [b.mul(spread(b, g, x, axis), b.add(regular, at_zero))]


def _extremum_vjp(b, g, out, args, params, active):
    # The cotangent is shared equally among the positions that attain the extremum.
    x, axis = args[0], params.get("axis")
    extremum = spread(b, out, x, axis)
    mask = b.call("eq", x, extremum)
    count = b.call("to_float", b.call("sum", mask)) if axis is None else \
        spread(b, b.call("sum", mask, axis=axis), x, axis)
    share = b.div(spread(b, g, x, axis), count)
    return [zero_where(b, mask, share)]


def _norm_vjp(b, g, out, args, params, active):
    # x / |x| * g; at x == 0 the subgradient 0 (as PyTorch), not 0 * inf = nan
    return [b.mul(zero_safe_scale(b, g, out), args[0])]


def _norm_batch(b, args, batched, params, size):
    x = args[0]
    if x.type.ndim == 1:
        return b.call("abs", x)
    return b.call("sqrt", reduction_batch("sum")(b, [b.mul(x, x)], batched, {}, size))


define("prod", reduction, _by_axis("prod"), kinds=_REDUCTION, vjp=_prod_vjp, jvp=weighted_reduction_jvp,
       reduces=("prod",))
define("max", reduction, _by_axis("max"), kinds=_REDUCTION, vjp=_extremum_vjp, jvp=weighted_reduction_jvp,
       accumulator=Accumulator(float("-inf"), "maximum"), reduces=("max", "amax"))
define("min", reduction, _by_axis("min"), kinds=_REDUCTION, vjp=_extremum_vjp, jvp=weighted_reduction_jvp,
       accumulator=Accumulator(float("inf"), "minimum"), reduces=("min", "amin"))
define("norm", lambda t, p, c=None: Type(to_float(t[0].dtype), 0), "np.linalg.norm(_0)", kinds={REDUCTION},
       vjp=_norm_vjp, jvp=weighted_reduction_jvp, batch=_norm_batch)


# The position of the largest/smallest element (flat, or along ``axis``), the sorting
# permutation of a 1-d array. np.sort is x[argsort(x)], a differentiable gather.
def _arg_extremum_type(types, params, consts=None):
    return Type(INT64, 0 if params.get("axis") is None else types[0].ndim - 1)


for _name in ("argmax", "argmin"):
    define(_name, _arg_extremum_type,
           lambda t, p, _n=_name: f"np.{_n}(_0)" if p.get("axis") is None else f"np.{_n}(_0, axis={{axis}})",
           kinds={REDUCTION, NON_DIFFERENTIABLE})
define("argsort", lambda t, p, c=None: Type(INT64, 1), "np.argsort(_0)", kinds={NON_DIFFERENTIABLE})


def _cumsum_vjp(b, g, out, args, params, active):
    x = args[0]
    ct = b.call("cumsum_adjoint", g)
    if x.type.ndim != 1:
        ct = b.call("reshape", ct, *[b.call("dim", x, axis=k) for k in range(x.type.ndim)])
    return [ct]


def _cumsum_adjoint_vjp(b, g, out, args, params, active):
    # cumsum_adjoint is linear with the transposed matrix of cumsum.
    return [b.call("cumsum", g)]


def _flat_cumsum_batch(b, args, batched, params, size):
    """``np.cumsum`` flattens: the members' elements in rows, summed down the rows."""
    x = args[0]
    if x.type.ndim > 2:
        x = b.call("reshape", x, b.call("size", unbatched_view(b, x)), size)
    return b.call("cumsum_axis", x, axis=0)


def _flat_cumsum_adjoint_batch(b, args, batched, params, size):
    return b.call("cumsum_axis_adjoint", args[0], axis=0)


define("cumsum", lambda t, p, c=None: Type(t[0].dtype, 1), "np.cumsum(_0)", kinds={FRESH, C_ORDERED_RESULT},
       vjp=_cumsum_vjp,
       linear_in=(0,), shape=flattened, batch=_flat_cumsum_batch)
define("cumsum_adjoint", same_as_first, "rt.cumsum_adjoint(_0)", kinds={RULE_ONLY}, vjp=_cumsum_adjoint_vjp,
       linear_in=(0,), shape=same_as_argument(0), batch=_flat_cumsum_adjoint_batch)
