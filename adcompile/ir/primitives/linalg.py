"""Linear algebra: matrix products, the diagonal and the trace."""
from ..types import Type, promote_dtypes
from .declare import BILINEAR, RULE_ONLY, define
from .type_rules import matmul_type


def _matmul_vjp(b, g, out, args, params, active):
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
    elif kind == (2, 2):
        ga = b.call("matmul", g, b.call("transpose", c)) if active[0] else None
        gc = b.call("matmul", b.call("transpose", a), g) if active[1] else None
    else:  # a stack of matrices (3-d) on either side: summed back over the stack where broadcast
        ga = b.call("unbroadcast", b.call("matmul", g, _swap_last_axes(b, c)), a) if active[0] else None
        gc = b.call("unbroadcast", b.call("matmul", _swap_last_axes(b, a), g), c) if active[1] else None
    return [ga, gc]


def _swap_last_axes(b, x):
    return b.call("transpose", x) if x.type.ndim == 2 else b.call("transpose", x, axes=(0, 2, 1))


def _outer_vjp(b, g, out, args, params, active):
    a, c = args
    return [b.call("matmul", g, c) if active[0] else None,
            b.call("matmul", b.call("transpose", g), a) if active[1] else None]


define("matmul", matmul_type, "rt.matmul(_0, _1)", kinds={BILINEAR}, vjp=_matmul_vjp)
define("outer", lambda t, p, c=None: Type(promote_dtypes(t[0].dtype, t[1].dtype), 2), "np.outer(_0, _1)",
       kinds={BILINEAR}, vjp=_outer_vjp)


def _diag_vjp(b, g, out, args, params, active):
    return [b.call("diag_adjoint", g, args[0])]


def _diag_adjoint_vjp(b, g, out, args, params, active):
    return [b.call("diag", g), None]


def _trace_vjp(b, g, out, args, params, active):
    x = args[0]
    return [b.call("diag_adjoint", b.call("broadcast_to_shape", g, b.call("diag", x)), x)]


# np.diag of a matrix is a (read-only) view, of a vector a new matrix: ir/memory.py tells them apart
define("diag", lambda t, p, c=None: Type(t[0].dtype, 3 - t[0].ndim), "np.diag(_0)", vjp=_diag_vjp, linear_in=(0,))
define("diag_adjoint", lambda t, p, c=None: t[1], "rt.diag_adjoint(_0, _1)", kinds={RULE_ONLY},
       vjp=_diag_adjoint_vjp, linear_in=(0,), shape_only=(1,))
define("trace", lambda t, p, c=None: Type(t[0].dtype, 0), "np.trace(_0)", vjp=_trace_vjp, linear_in=(0,))
