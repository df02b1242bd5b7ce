"""Array creation. Shapes are the int arguments; ``ndim`` and ``dtype`` are static params.
Every result is a fresh array that may be written to: never merged by CSE."""
from ...dims import difference
from ...types import F8, FLOAT64, INT64, Type, promote_dtypes
from ..declare import (ALLOCATION, AXIS_LENGTHS, C_ORDERED_RESULT, FRESH, LAYOUT_LIKE_FIRST, NEVER_MERGED,
                       NEW_FROM_SHAPE, define)
from ..emission import argument_list, shape_tuple
from ..shape_rules import lengths_from
from ..type_rules import ndim_param, same_as_first

_NEW_ARRAY = ALLOCATION | {FRESH, NEW_FROM_SHAPE}

_DTYPE = "np.{dtype_name}"
for _name in ("zeros", "ones", "empty"):
    define(_name, ndim_param, lambda t, p, _n=_name: f"np.{_n}({shape_tuple(t)}, dtype={_DTYPE})",
           kinds=_NEW_ARRAY | {AXIS_LENGTHS, C_ORDERED_RESULT}, shape=lengths_from(0))


def _full_vjp(b, g, out, args, params, active):
    return [None] * (len(args) - 1) + [b.call("sum", g)]


# full(n, m, ..., value): differentiable in the fill value (the last argument) only
define("full", lambda t, p, c=None: Type(t[-1].dtype, len(t) - 1),
       lambda t, p: f"np.full({shape_tuple(t, 0, len(t) - 1)}, _{len(t) - 1})",
       kinds={NEVER_MERGED, FRESH, NEW_FROM_SHAPE, C_ORDERED_RESULT}, vjp=_full_vjp, linear_in=(-1,),
       shape=lambda shapes, args, params: shapes.lengths_of(args[:-1]))


def _zeros_like_type(types, params, consts=None):
    return types[0] if types[0].dtype != INT64 or types[0].ndim else F8


def _zeros_like_text(types, params):
    if types[0].ndim:
        return "np.zeros_like(_0)"
    return "0.0" if types[0].dtype != "f4" else "np.float32(0.0)"


define("zeros_like", _zeros_like_type, _zeros_like_text, kinds=_NEW_ARRAY | {LAYOUT_LIKE_FIRST}, shape_only=(0,),
       shape_of=0, fill=0)
define("ones_like", same_as_first, lambda t, p: "np.ones_like(_0)" if t[0].ndim else "1.0",
       kinds=_NEW_ARRAY | {LAYOUT_LIKE_FIRST},
       shape_only=(0,), shape_of=0, fill=1)


def _arange_shape(shapes, args, params):
    if len(args) == 1:
        n = shapes.length(args[0])
        return None if n is None else (n,)
    if len(args) == 2:
        start, stop = shapes.length(args[0]), shapes.length(args[1])
        if start is None or stop is None:
            return None
        length = difference(stop, start)
        return None if length is None else (length,)
    return None


def _linspace_shape(shapes, args, params):
    n = shapes.length(args[2])
    return None if n is None else (n,)


def _eye_shape(shapes, args, params):
    n = shapes.length(args[0])
    return None if n is None else (n, n)


define("arange", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), 1),
       lambda t, p: f"np.arange({argument_list(len(t))})", kinds=ALLOCATION | {C_ORDERED_RESULT}, shape=_arange_shape)
# endpoint=False is the grid with one point more, without its end (numpy's values exactly;
# numba's np.linspace has no endpoint argument)
define("linspace", lambda t, p, c=None: Type(FLOAT64, 1),
       lambda t, p: "np.linspace(_0, _1, _2)" if p.get("endpoint", True) else "np.linspace(_0, _1, _2 + 1)[:-1]",
       kinds=ALLOCATION | {C_ORDERED_RESULT}, shape=_linspace_shape)
define("eye", lambda t, p, c=None: Type(FLOAT64, 2), "np.eye(_0)", kinds=ALLOCATION | {C_ORDERED_RESULT},
       shape=_eye_shape)
