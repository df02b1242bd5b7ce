"""Shape changes, joins, indexing and shape queries of arrays."""
from ..types import FLOAT64, I8, Type, promote_dtypes
from ..indexing import items_with_atoms
from ..nodes import const
from .declare import NEVER_MERGED, NON_DIFFERENTIABLE, RECOMPUTABLE, RULE_ONLY, VIEW, define
from .emission import argument_list, shape_tuple
from .record import ALL_ARGUMENTS
from .reverse_helpers import ScatterInto, getitem
from .type_rules import fixed, getitem_type, same_as_first
from ..indexing import FULL_SLICE


def _transpose_vjp(b, g, out, args, params, active):
    axes = params.get("axes")
    if axes is None:
        return [b.call("transpose", g)]
    inverse = tuple(sorted(range(len(axes)), key=lambda k: axes[k]))
    return [b.call("transpose", g, axes=inverse)]


define("transpose", same_as_first, lambda t, p: "_0.T" if p.get("axes") is None else "np.transpose(_0, {axes})",
       kinds={VIEW}, vjp=_transpose_vjp, linear_in=(0,))


def _reshape_like(b, g, x):
    if x.type.ndim == 0:
        return b.call("sum", g)
    return b.call("reshape", g, *[b.call("dim", x, axis=k) for k in range(x.type.ndim)])


def _reshape_vjp(b, g, out, args, params, active):
    return [_reshape_like(b, g, args[0])] + [None] * (len(args) - 1)


define("reshape", lambda t, p, c=None: Type(t[0].dtype, len(t) - 1),
       lambda t, p: f"np.ascontiguousarray(_0).reshape({shape_tuple(t, 1)})",
       kinds={VIEW}, vjp=_reshape_vjp, linear_in=(0,))
define("ravel", lambda t, p, c=None: Type(t[0].dtype, 1), "np.ascontiguousarray(_0).ravel()",
       kinds={VIEW}, vjp=_reshape_vjp, linear_in=(0,))


def _expand_axis_vjp(b, g, out, args, params, active):
    if args[0].type.ndim == 0:
        return [b.call("sum", g)]
    return [b.call("sum", g, axis=params["axis"])]


define("expand_axis", lambda t, p, c=None: Type(t[0].dtype, t[0].ndim + 1), "rt.expand_axis(_0, {axis})",
       kinds={VIEW}, vjp=_expand_axis_vjp, linear_in=(0,))


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
       kinds={VIEW, NEVER_MERGED, RULE_ONLY}, vjp=_broadcast_to_shape_vjp, linear_in=(0,), shape_only=(1,), shape_of=1)
define("unbroadcast", lambda t, p, c=None: Type(t[0].dtype, t[1].ndim), "rt.unbroadcast(_0, _1)",
       kinds={RULE_ONLY}, vjp=_unbroadcast_vjp, linear_in=(0,), shape_only=(1,), shape_of=1)


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


define("concatenate", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), t[0].ndim),
       lambda t, p: f"np.concatenate(({argument_list(len(t))},), axis={{axis}})",
       vjp=_concatenate_vjp, linear_in=ALL_ARGUMENTS)
define("stack", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), t[0].ndim + 1),
       lambda t, p: f"np.stack(({argument_list(len(t))},), axis={{axis}})",
       vjp=_stack_vjp, linear_in=ALL_ARGUMENTS)


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


# A view unless an index is an array (a gather); ir/memory.py looks at the items.
define("getitem", getitem_type, lambda t, p: "_0[" + p["text"] + "]",
       kinds={VIEW, RECOMPUTABLE}, vjp=_getitem_vjp, linear_in=(0,))

_SHAPE_QUERY = {NON_DIFFERENTIABLE, RECOMPUTABLE}
define("dim", fixed(I8), "_0.shape[{axis}]", kinds=_SHAPE_QUERY, shape_only=(0,))
define("size", fixed(I8), "_0.size", kinds=_SHAPE_QUERY, shape_only=(0,))
