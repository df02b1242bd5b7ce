"""Handlers for shifts, padding and 1-d signals: np.roll, np.pad, np.convolve, np.correlate,
np.interp, np.searchsorted, np.polyfit (see ``calls.py``).

All but ``searchsorted`` lower onto differentiable primitives (slices, concatenation,
gathers, the full ``convolve``), so their derivatives of every order come from those.
"""
from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ..calls import _take, array_arg, atom, cast, handler
from .gathers import check_keywords, gather_along, static_axis
from ..static_values import StaticStr
from ..values import NoneValue, TupleValue
from ...ir.indexing import FULL_SLICE



def _static_str(tr, value, node, what, choices):
    if isinstance(value, StaticStr) and value.value in choices:
        return value.value
    raise tr.error(f"{what} must be one of {', '.join(repr(c) for c in choices)} (a constant string)", node,
                   UnsupportedFunctionError)


def _int_atom(tr, value, node, what):
    value = atom(tr, value, node)
    if value.type.dtype != "i8" or value.type.ndim:
        raise tr.error(f"{what} must be an integer", node, TypeMismatchError)
    return value


def _one_d(tr, value, node, what):
    value = atom(tr, value, node)
    if value.type.ndim != 1:
        raise tr.error(f"{what} must be a 1-d array", node, TypeMismatchError)
    return value


def _along(axis, item):
    return [FULL_SLICE] * axis + [item]


def _dim(tr, x, axis, node):
    return tr.emit("dim", [x], node, axis=axis)


# ------------------------------------------------------------------ roll
@handler("np.roll")
def _roll(tr, args, kwargs, node):
    check_keywords(tr, "roll", kwargs, ("a", "shift", "axis"), node)
    x, shift, axis = _take(args, kwargs, ["a", "shift", "axis"])
    x = array_arg(tr, x, node, "array")
    if isinstance(shift, TupleValue):
        raise tr.error("np.roll with a tuple of shifts is not supported; roll one axis at a time", node,
                       UnsupportedFunctionError)
    shift = _int_atom(tr, shift, node, "the shift of np.roll")
    if axis is None or isinstance(axis, NoneValue):
        flat = x if x.type.ndim == 1 else tr.emit("ravel", [x], node)
        rolled = roll_along(tr, flat, shift, 0, node)
        if x.type.ndim == 1:
            return rolled
        return tr.emit("reshape", [rolled] + [_dim(tr, x, k, node) for k in range(x.type.ndim)], node)
    return roll_along(tr, x, shift, static_axis(tr, axis, x.type.ndim, node), node)


def roll_along(tr, x, shift, axis, node):
    """x rolled by ``shift`` along ``axis``: its last (shift mod n) entries moved to the front."""
    b = tr.builder
    n = _dim(tr, x, axis, node)
    cut = b.sub(n, tr.emit("mod", [shift, n], node))
    tail = tr.getitem(x, _along(axis, ("slice", cut, None, None)), node)
    head = tr.getitem(x, _along(axis, ("slice", None, cut, None)), node)
    return tr.emit("concatenate", [tail, head], node, axis=axis)


# ------------------------------------------------------------------ pad
def _pad_widths(tr, value, ndim, node):
    """numpy's pad_width forms (n, (before, after), ((b0, a0), (b1, a1), ...)) as one
    (before, after) pair of int atoms per axis."""
    def pair(item):
        if isinstance(item, TupleValue):
            if len(item.items) == 1:
                return pair(item.items[0])
            if len(item.items) != 2:
                raise tr.error("a pad width is an int or a (before, after) pair", node, TypeMismatchError)
            return tuple(_int_atom(tr, w, node, "a pad width") for w in item.items)
        width = _int_atom(tr, item, node, "a pad width")
        return width, width

    if isinstance(value, TupleValue) and any(isinstance(item, TupleValue) for item in value.items):
        if len(value.items) == 1:
            return [pair(value.items[0])] * ndim
        if len(value.items) != ndim:
            raise tr.error(f"np.pad of a {ndim}-d array needs {ndim} (before, after) pairs", node,
                           TypeMismatchError)
        return [pair(item) for item in value.items]
    return [pair(value)] * ndim


@handler("np.pad")
def _pad(tr, args, kwargs, node):
    check_keywords(tr, "pad", kwargs, ("array", "pad_width", "mode", "constant_values"), node)
    x, widths, mode, fill = _take(args, kwargs, ["array", "pad_width", "mode", "constant_values"],
                                  {"mode": StaticStr("constant"), "constant_values": const(0.0)})
    x = array_arg(tr, x, node, "array")
    mode = _static_str(tr, mode, node, "the mode of np.pad", ("constant", "edge", "reflect"))
    if mode != "constant" and "constant_values" in kwargs:
        raise tr.error("constant_values is only used with mode='constant'", node, TypeMismatchError)
    if mode == "constant":
        fill = fill if isinstance(fill, TupleValue) else atom(tr, fill, node)
        if isinstance(fill, TupleValue) or fill.type.ndim:
            raise tr.error("np.pad: constant_values must be one scalar in compiled code", node,
                           UnsupportedFunctionError)
        fill = cast(tr, fill, x.type.dtype, node)
    for axis, (before, after) in enumerate(_pad_widths(tr, widths, x.type.ndim, node)):
        if mode == "constant":
            x = _pad_constant(tr, x, axis, before, after, fill, node)
        else:
            x = _pad_by_gather(tr, x, axis, before, after, mode, node)
    return x


def _pad_constant(tr, x, axis, before, after, fill, node):
    def block(width):
        shape = [width if k == axis else _dim(tr, x, k, node) for k in range(x.type.ndim)]
        return tr.emit("full", shape + [fill], node)
    return tr.emit("concatenate", [block(before), x, block(after)], node, axis=axis)


def _pad_by_gather(tr, x, axis, before, after, mode, node):
    """'edge' and 'reflect' padding: a gather along ``axis`` at source positions computed from
    the output positions ``arange(-before, n + after)``."""
    b = tr.builder
    n = _dim(tr, x, axis, node)
    last = b.sub(n, const(1))
    positions = tr.emit("arange", [b.neg(before), b.add(n, after)], node)
    if mode == "edge":
        source = tr.emit("minimum", [tr.emit("maximum", [positions, const(0)], node), last], node)
    else:  # reflect: the positions fold with period 2 (n - 1), mirrored about the ends
        period = b.mul(const(2), last)
        folded = tr.emit("mod", [positions, period], node)
        source = tr.emit("minimum", [folded, b.sub(period, folded)], node)
    return gather_along(tr, x, axis, source, node)


# ------------------------------------------------------------------ convolve, correlate
def _mode_slice(tr, full, a, v, mode, same_start, node):
    """The part of the full convolution ``full`` that mode 'same' or 'valid' keeps."""
    b = tr.builder
    na, nv = _dim(tr, a, 0, node), _dim(tr, v, 0, node)
    shorter, longer = tr.emit("minimum", [na, nv], node), tr.emit("maximum", [na, nv], node)
    if mode == "full":
        return full
    if mode == "valid":
        start, length = b.sub(shorter, const(1)), b.add(b.sub(longer, shorter), const(1))
    else:
        start, length = same_start(shorter, na, nv), longer
    return tr.getitem(full, [("slice", start, b.add(start, length), None)], node)


def _signal_args(tr, name, args, kwargs, default_mode, node):
    check_keywords(tr, name, kwargs, ("a", "v", "mode"), node)
    a, v, mode = _take(args, kwargs, ["a", "v", "mode"], {"mode": StaticStr(default_mode)})
    a = _one_d(tr, a, node, f"the first argument of np.{name}")
    v = _one_d(tr, v, node, f"the second argument of np.{name}")
    return a, v, _static_str(tr, mode, node, f"the mode of np.{name}", ("full", "same", "valid"))


@handler("np.convolve")
def _convolve(tr, args, kwargs, node):
    a, v, mode = _signal_args(tr, "convolve", args, kwargs, "full", node)
    full = tr.emit("convolve", [a, v], node)
    return _mode_slice(tr, full, a, v, mode,
                       lambda shorter, na, nv: tr.emit("floordiv", [tr.builder.sub(shorter, const(1)), const(2)], node),
                       node)


@handler("np.correlate")
def _correlate(tr, args, kwargs, node):
    a, v, mode = _signal_args(tr, "correlate", args, kwargs, "valid", node)
    full = tr.emit("convolve", [a, tr.getitem(v, [("slice", None, None, const(-1))], node)], node)

    def same_start(shorter, na, nv):
        # numpy centres 'same' differently when the signal is the shorter one
        signal_shorter = tr.emit("as_dtype", [tr.emit("lt", [na, nv], node)], node, dtype="i8")
        return tr.emit("floordiv", [tr.builder.add(tr.builder.sub(shorter, const(1)), signal_shorter), const(2)],
                       node)
    return _mode_slice(tr, full, a, v, mode, same_start, node)


# ------------------------------------------------------------------ searchsorted, interp
@handler("np.searchsorted")
def _searchsorted(tr, args, kwargs, node):
    check_keywords(tr, "searchsorted", kwargs, ("a", "v", "side"), node)
    a, v, side = _take(args, kwargs, ["a", "v", "side"], {"side": StaticStr("left")})
    a = _one_d(tr, a, node, "the sorted array of np.searchsorted")
    side = _static_str(tr, side, node, "side", ("left", "right"))
    return tr.emit("searchsorted", [a, atom(tr, v, node)], node, side=side)


@handler("np.interp")
def _interp(tr, args, kwargs, node):
    """fp[i] + slope_i * (x - xp[i]) on the segment i holding x (x clamped to the grid, so
    outside it the end values with a zero derivative, as numpy's value)."""
    check_keywords(tr, "interp", kwargs, ("x", "xp", "fp"), node)
    x, xp, fp = _take(args, kwargs, ["x", "xp", "fp"])
    x = atom(tr, x, node)
    xp, fp = _one_d(tr, xp, node, "xp of np.interp"), _one_d(tr, fp, node, "fp of np.interp")
    b = tr.builder
    last = b.sub(_dim(tr, xp, 0, node), const(1))
    segment = b.sub(tr.emit("searchsorted", [xp, x], node, side="right"), const(1))
    segment = tr.emit("minimum", [tr.emit("maximum", [segment, const(0)], node), b.sub(last, const(1))], node)
    kind = "array" if segment.type.ndim else "int"

    def at(values, offset):
        return tr.getitem(values, [(kind, b.add(segment, offset))], node)

    low = tr.getitem(xp, [("int", const(0))], node)
    high = tr.getitem(xp, [("int", last)], node)
    clamped = tr.emit("minimum", [tr.emit("maximum", [x, low], node), high], node)
    left = at(xp, const(0))
    slope = b.div(b.sub(at(fp, const(1)), at(fp, const(0))), b.sub(at(xp, const(1)), left))
    return b.add(b.mul(slope, b.sub(clamped, left)), at(fp, const(0)))


# ------------------------------------------------------------------ polyfit
@handler("np.polyfit")
def _polyfit(tr, args, kwargs, node):
    """Least squares on the Vandermonde matrix by modified Gram-Schmidt (with one
    re-orthogonalisation), unrolled over the deg + 1 columns: differentiable in x and y."""
    check_keywords(tr, "polyfit", kwargs, ("x", "y", "deg"), node)
    x, y, deg = _take(args, kwargs, ["x", "y", "deg"])
    x, y = _one_d(tr, x, node, "x of np.polyfit"), _one_d(tr, y, node, "y of np.polyfit (2-d y is not supported)")
    if not (hasattr(deg, "value") and isinstance(deg.value, int) and deg.value >= 0):
        raise tr.error("the degree of np.polyfit must be a constant non-negative integer", node, TypeMismatchError)
    b = tr.builder
    powers = [tr.emit("ones_like", [x], node)]
    for _ in range(deg.value):
        powers.append(b.mul(powers[-1], x))
    columns = powers[::-1]  # the coefficient of the highest power first, as numpy returns them

    def dot(p, q):
        return tr.emit("matmul", [p, q], node)

    basis, r = [], {}
    for j, column in enumerate(columns):
        for i, q in enumerate(basis):
            r[i, j] = dot(q, column)
            column = b.sub(column, b.mul(r[i, j], q))
        for i, q in enumerate(basis):  # the second pass restores orthogonality lost to rounding
            correction = dot(q, column)
            r[i, j] = b.add(r[i, j], correction)
            column = b.sub(column, b.mul(correction, q))
        r[j, j] = tr.emit("norm", [column], node)
        basis.append(b.div(column, r[j, j]))
    coefficients = [None] * len(columns)
    for j in reversed(range(len(columns))):
        rest = dot(basis[j], y)
        for k in range(j + 1, len(columns)):
            rest = b.sub(rest, b.mul(r[j, k], coefficients[k]))
        coefficients[j] = b.div(rest, r[j, j])
    items = [tr.emit("expand_axis", [c], node, axis=0) for c in coefficients]
    return tr.emit("concatenate", items, node, axis=0)
