"""Array creation. Shapes are the int arguments; ``ndim`` and ``dtype`` are static params.
Every result is a fresh array that may be written to: never merged by CSE."""
from ..types import F8, FLOAT64, INT64, Type, promote_dtypes
from .declare import ALLOCATION, NEVER_MERGED, define
from .emission import argument_list, shape_tuple
from .type_rules import ndim_param, same_as_first

_DTYPE = "np.{dtype_name}"
for _name in ("zeros", "ones", "empty"):
    define(_name, ndim_param, lambda t, p, _n=_name: f"np.{_n}({shape_tuple(t)}, dtype={_DTYPE})", kinds=ALLOCATION)


def _full_vjp(b, g, out, args, params, active):
    return [None] * (len(args) - 1) + [b.call("sum", g)]


# full(n, m, ..., value): differentiable in the fill value (the last argument) only
define("full", lambda t, p, c=None: Type(t[-1].dtype, len(t) - 1),
       lambda t, p: f"np.full({shape_tuple(t, 0, len(t) - 1)}, _{len(t) - 1})",
       kinds={NEVER_MERGED}, vjp=_full_vjp, linear_in=(-1,))


def _zeros_like_type(types, params, consts=None):
    return types[0] if types[0].dtype != INT64 or types[0].ndim else F8


def _zeros_like_text(types, params):
    if types[0].ndim:
        return "np.zeros_like(_0)"
    return "0.0" if types[0].dtype != "f4" else "np.float32(0.0)"


define("zeros_like", _zeros_like_type, _zeros_like_text, kinds=ALLOCATION, shape_only=(0,), shape_of=0)
define("ones_like", same_as_first, lambda t, p: "np.ones_like(_0)" if t[0].ndim else "1.0", kinds=ALLOCATION,
       shape_only=(0,), shape_of=0)
define("arange", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), 1),
       lambda t, p: f"np.arange({argument_list(len(t))})", kinds=ALLOCATION)
# endpoint=False is the grid with one point more, without its end (numpy's values exactly;
# numba's np.linspace has no endpoint argument)
define("linspace", lambda t, p, c=None: Type(FLOAT64, 1),
       lambda t, p: "np.linspace(_0, _1, _2)" if p.get("endpoint", True) else "np.linspace(_0, _1, _2 + 1)[:-1]",
       kinds=ALLOCATION)
define("eye", lambda t, p, c=None: Type(FLOAT64, 2), "np.eye(_0)", kinds=ALLOCATION)
