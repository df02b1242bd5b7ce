"""Shape changes, joins, indexing and shape queries of arrays."""
from ...types import FLOAT64, I8, NUMPY_DTYPE_NAME, Type, promote_dtypes
from ...indexing import FULL_SLICE, items_with_atoms
from ...nodes import const
from ..declare import (AXIS_VIEW, C_ORDERED_RESULT, FRESH, NEVER_MERGED, NON_DIFFERENTIABLE, OWNED_LIKE_FIRST, OWNED_RESULT,
                      PASSES_VALUES, RECOMPUTABLE, RULE_ONLY, SHAPE_QUERY, VIEW, define)
from ..emission import argument_list, shape_tuple
from ..record import ALL_ARGUMENTS
from ..reverse_helpers import ScatterInto, getitem
from ..type_rules import fixed, getitem_type, same_as_first
from ..batching_rules import batched_copy, shaped_like_second, unbatched_view
from ..shape_rules import constant, flattened, int_const, lengths_from, total_length


def _transpose_vjp(b, g, out, args, params, active):
    axes = params.get("axes")
    if axes is None:
        return [b.call("transpose", g)]
    inverse = tuple(sorted(range(len(axes)), key=lambda k: axes[k]))
    return [b.call("transpose", g, axes=inverse)]


def _transpose_shape(shapes, args, params):
    shape = shapes.of(args[0])
    axes = params.get("axes")
    return tuple(reversed(shape)) if axes is None else tuple(shape[a] for a in axes)


def _transpose_batch(b, args, batched, params, size):
    x = args[0]
    axes = params.get("axes")
    axes = tuple(reversed(range(x.type.ndim - 1))) if axes is None else tuple(axes)
    return b.call("transpose", x, axes=axes + (x.type.ndim - 1,))


define("transpose", same_as_first, lambda t, p: "_0.T" if p.get("axes") is None else "np.transpose(_0, {axes})",
       kinds={VIEW, OWNED_LIKE_FIRST}, vjp=_transpose_vjp, linear_in=(0,), shape=_transpose_shape,
       batch=_transpose_batch)


def _reshape_like(b, g, x):
    if x.type.ndim == 0:
        return b.call("sum", g)
    return b.call("reshape", g, *[b.call("dim", x, axis=k) for k in range(x.type.ndim)])


def _reshape_vjp(b, g, out, args, params, active):
    return [_reshape_like(b, g, args[0])] + [None] * (len(args) - 1)


def _reshape_batch(b, args, batched, params, size):
    if any(batched[1:]):
        return None
    return b.emit("reshape", args + [size])


def _ravel_batch(b, args, batched, params, size):
    return b.emit("reshape", [args[0], b.call("size", unbatched_view(b, args[0])), size])


define("reshape", lambda t, p, c=None: Type(t[0].dtype, len(t) - 1),
       lambda t, p: f"np.ascontiguousarray(_0).reshape({shape_tuple(t, 1)})",
       kinds={VIEW}, vjp=_reshape_vjp, linear_in=(0,), shape=lengths_from(1), batch=_reshape_batch)
define("ravel", lambda t, p, c=None: Type(t[0].dtype, 1), "np.ascontiguousarray(_0).ravel()",
       kinds={VIEW, C_ORDERED_RESULT}, vjp=_reshape_vjp, linear_in=(0,), shape=flattened, batch=_ravel_batch)


def _expand_axis_vjp(b, g, out, args, params, active):
    if args[0].type.ndim == 0:
        return [b.call("sum", g)]
    return [b.call("sum", g, axis=params["axis"])]


def _expand_axis_shape(shapes, args, params):
    shape = shapes.of(args[0])
    axis = params["axis"]
    axis = axis + len(shape) + 1 if axis < 0 else axis
    return shape[:axis] + (constant(1),) + shape[axis:]


def _expand_axis_batch(b, args, batched, params, size):
    axis = params["axis"]
    return b.call("expand_axis", args[0], axis=axis if axis >= 0 else axis - 1)


define("expand_axis", lambda t, p, c=None: Type(t[0].dtype, t[0].ndim + 1), "rt.expand_axis(_0, {axis})",
       kinds={VIEW, AXIS_VIEW}, vjp=_expand_axis_vjp, linear_in=(0,), shape=_expand_axis_shape,
       batch=_expand_axis_batch)


def _broadcast_to_shape_vjp(b, g, out, args, params, active):
    return [b.call("unbroadcast", g, args[0]), None]


def _unbroadcast_vjp(b, g, out, args, params, active):
    return [b.call("broadcast_to_shape", g, args[0]), None]


# broadcast_to_shape(x, like): x broadcast to like's shape; unbroadcast(g, like): g summed to it
def _broadcast_to_shape_type(types, params, consts=None):
    """An array ``g`` keeps its dtype; a scalar fills an array of ``like``'s gradient dtype (its
    own if floating, else float64), as the run-time helper does."""
    g, like = types
    if g.ndim:
        return Type(g.dtype, like.ndim)
    return Type(like.dtype if like.is_float else FLOAT64, like.ndim)


define("broadcast_to_shape", _broadcast_to_shape_type, "rt.broadcast_to_shape(_0, _1)",
       kinds={VIEW, NEVER_MERGED, RULE_ONLY, FRESH, AXIS_VIEW, PASSES_VALUES}, vjp=_broadcast_to_shape_vjp,
       linear_in=(0,), shape_only=(1,), shape_of=1, batch=shaped_like_second("broadcast_to_shape"))
define("unbroadcast", lambda t, p, c=None: Type(t[0].dtype, t[1].ndim), "rt.unbroadcast(_0, _1)",
       kinds={RULE_ONLY, PASSES_VALUES, OWNED_LIKE_FIRST, C_ORDERED_RESULT}, vjp=_unbroadcast_vjp, linear_in=(0,), shape_only=(1,),
       shape_of=1, batch=shaped_like_second("unbroadcast"))


def _concatenate_vjp(b, g, out, args, params, active):
    axis = params["axis"]
    cts, offset = [], const(0)
    for arg, is_active in zip(args, active):
        end = b.add(offset, b.call("dim", arg, axis=axis))
        if is_active:
            index = [FULL_SLICE] * axis + [("slice", offset, end, None)]
            cts.append(getitem(b, g, index))
        else:
            cts.append(None)
        offset = end
    return cts


def _stack_vjp(b, g, out, args, params, active):
    axis = params["axis"]
    return [getitem(b, g, [FULL_SLICE] * axis + [("int", const(k))]) if is_active else None
            for k, is_active in enumerate(active)]


def _concatenate_shape(shapes, args, params):
    arrays = [shapes.of(a) for a in args]
    axis = params.get("axis", 0)
    axis = axis + len(arrays[0]) if axis < 0 else axis
    total = total_length(shape[axis] for shape in arrays)
    # numpy checked that the other axes agree, so the first array's lengths are everyone's
    return None if total is None else arrays[0][:axis] + (total,) + arrays[0][axis + 1:]


def _stack_shape(shapes, args, params):
    shape = shapes.of(args[0])
    axis = params.get("axis", 0)
    axis = axis + len(shape) + 1 if axis < 0 else axis
    return shape[:axis] + (constant(len(args)),) + shape[axis:]


def _joined_batch(name):
    """``concatenate``/``stack`` along ``axis`` (from the front): every part batched."""
    def rule(b, args, batched, params, size):
        parts = [a if is_batched else batched_copy(b, a, size) for a, is_batched in zip(args, batched)]
        return b.emit(name, parts, **params)
    return rule


define("concatenate", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), t[0].ndim),
       lambda t, p: f"np.concatenate(({argument_list(len(t))},), axis={{axis}})",
       vjp=_concatenate_vjp, linear_in=ALL_ARGUMENTS, shape=_concatenate_shape, batch=_joined_batch("concatenate"))
define("stack", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), t[0].ndim + 1),
       lambda t, p: f"np.stack(({argument_list(len(t))},), axis={{axis}})",
       vjp=_stack_vjp, linear_in=ALL_ARGUMENTS, shape=_stack_shape, batch=_joined_batch("stack"))


# vector(s0, s1, ...): the 1-D array of scalars of one dtype, ``np.array([s0, s1, ...])``. One
# allocation and a store per element (in numba: seven times faster than joining one-element arrays
# with np.concatenate); the cotangent of ``s_k`` is the element ``g[k]``.
def _vector_text(types, params):
    return f"np.array([{argument_list(len(types))}], dtype={NUMPY_DTYPE_NAME[types[0].dtype]})"


def _vector_vjp(b, g, out, args, params, active):
    return [getitem(b, g, [("int", const(k))]) if is_active else None for k, is_active in enumerate(active)]


def _vector_batch(b, args, batched, params, size):
    """The batched scalars are arrays along the batch axis: stacked, the vector's axis first."""
    parts = [a if is_batched else batched_copy(b, a, size) for a, is_batched in zip(args, batched)]
    return b.emit("stack", parts, axis=0)


# recomputed by the backward rather than taped (a few stores, where a tape keeps an array per iteration)
define("vector", lambda t, p, c=None: Type(t[0].dtype, 1), _vector_text, vjp=_vector_vjp, linear_in=ALL_ARGUMENTS,
       kinds={RECOMPUTABLE, OWNED_RESULT, C_ORDERED_RESULT},
       shape=lambda shapes, args, params: (constant(len(args)),), batch=_vector_batch)


def _getitem_vjp(b, g, out, args, params, active):
    items = items_with_atoms(params["items"], args)
    value = g
    if any(item[0] == "none" for item in items):
        squeeze = []
        for item in items:
            if item[0] == "none":
                squeeze.append(("int", const(0)))
            elif item[0] in ("slice", "array"):
                squeeze.append(FULL_SLICE)
        value = getitem(b, g, squeeze)
    kept = [item for item in items if item[0] != "none"]
    return [ScatterInto(kept, value)] + [None] * (len(args) - 1)


def _slice_length(shapes, dim, start, stop, step):
    """The Dim of ``x[start:stop:step]`` along an axis of length ``dim``, or None."""
    step_value = 1 if step is None else int_const(step)
    if step_value != 1:
        return None
    first = 0 if start is None else int_const(start)
    if first is None:
        return None
    if stop is None:
        end = dim
    else:
        last = int_const(stop)
        if last is None:  # x[:n] with n a length of the program: n when provably n <= len(x)
            length = shapes.length(stop)
            if length is None or length.terms != dim.terms or length.offset > dim.offset:
                return None
            end = length
        elif last < 0:
            end = dim.shifted(last)
        elif dim.constant is not None:
            end = constant(min(last, dim.constant))
        else:
            end = shapes.clipped(dim, last)  # min(stop, n): a symbol of its own
    if first >= 0:
        return end.shifted(-first)
    if stop is None and dim.constant is not None:
        return constant(min(-first, dim.constant))
    return None


def _getitem_shape(shapes, args, params):
    source = shapes.of(args[0])
    items = items_with_atoms(params["items"], args)
    kinds = [item[0] for item in items]
    if "array" in kinds and ("int" in kinds or kinds.count("array") > 1):
        return None  # numpy may move the broadcast index dims to the front
    axis, result = 0, []
    for item in items:
        kind = item[0]
        if kind == "none":
            result.append(constant(1))
        elif kind == "int":
            axis += 1
        elif kind == "slice":
            length = _slice_length(shapes, source[axis], *item[1:]) if axis < len(source) else None
            if length is None:
                return None
            result.append(length)
            axis += 1
        else:  # one integer index array: its shape, in its place
            index = item[1]
            if index.type.dtype == "b1":
                return None
            result.extend(shapes.of(index))
            axis += 1
    return tuple(result) + tuple(source[axis:])


def _getitem_batch(b, args, batched, params, size):
    if any(batched[1:]):
        return None  # an index that differs between members: a gather per member
    member = b.emit("getitem", args, **{**params, "result_ndim": params["result_ndim"] + 1})
    # an element was a value, but a row of the batched array is a view of it: the array may be
    # written afterwards
    return b.call("copy", member) if params["result_ndim"] == 0 else member


# A view unless an index is an array (a gather); ir/memory.py looks at the items.
define("getitem", getitem_type, lambda t, p: "_0[" + p["text"] + "]",
       kinds={VIEW, RECOMPUTABLE, AXIS_VIEW}, vjp=_getitem_vjp, linear_in=(0,), shape=_getitem_shape,
       batch=_getitem_batch)

_SHAPE_QUERY = {NON_DIFFERENTIABLE, RECOMPUTABLE, SHAPE_QUERY}
define("dim", fixed(I8), "_0.shape[{axis}]", kinds=_SHAPE_QUERY, shape_only=(0,))
define("size", fixed(I8), "_0.size", kinds=_SHAPE_QUERY, shape_only=(0,))
