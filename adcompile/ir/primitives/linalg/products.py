"""Linear algebra: matrix products, the diagonal and the trace."""
from ...types import Type, promote_dtypes
from ..batching_rules import logical_ndim, with_unit_batch_axis
from ..declare import BILINEAR, C_ORDERED_RESULT, FRESH, OWNED_RESULT, RULE_ONLY, Accumulator, define
from ..reverse_helpers import getitem
from ..shape_rules import product
from ..type_rules import matmul_type
from ...indexing import FULL_SLICE


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


def _matmul_shape(shapes, args, params):
    a, b = shapes.of(args[0]), shapes.of(args[1])
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 1:
        return b[:-2] + b[-1:]
    if len(b) == 1:
        return a[:-1]
    batch = a[:-2] if len(a) >= len(b) else b[:-2]
    if len(a) > 2 and len(b) > 2 and a[:-2] != b[:-2]:
        return None
    return batch + (a[-2], b[-1])


def _matmul_batch(b, args, batched, params, size):
    a, c = args
    kind = (logical_ndim(a, batched[0]), logical_ndim(c, batched[1]))
    if 3 in kind:
        return None
    if batched[0] and batched[1]:
        return _matmul_both_batched(b, a, c, kind)
    if batched[1]:
        return _matmul_batched_right(b, a, c, kind)
    return _matmul_batched_left(b, a, c, kind)


def _matmul_batched_right(b, a, c, kind):
    """``a @ C``: one matrix-matrix product with the members as columns."""
    if kind[1] == 1:  # C is (n, size)
        return b.call("matmul", a, c)
    n, p, size = (b.call("dim", c, axis=k) for k in range(3))  # C is (n, p, size)
    flat = b.call("matmul", a, b.call("reshape", c, n, b.mul(p, size)))
    return b.emit("reshape", [flat] + ([b.call("dim", a, axis=0)] if kind[0] == 2 else []) + [p, size])


def _matmul_batched_left(b, a, c, kind):
    """``A @ c``: the transposed product ``c.T @ A`` for a vector A, else one product of the
    members stacked as rows."""
    if kind[0] == 1:  # A is (n, size)
        return b.call("matmul", c if kind[1] == 1 else b.call("transpose", c), a)
    m, n, size = (b.call("dim", a, axis=k) for k in range(3))  # A is (m, n, size)
    rows = b.call("reshape", b.call("transpose", a, axes=(0, 2, 1)), b.mul(m, size), n)
    product = b.call("matmul", rows, c)
    if kind[1] == 1:
        return b.call("reshape", product, m, size)
    p = b.call("dim", c, axis=1)
    return b.call("transpose", b.call("reshape", product, m, size, p), axes=(0, 2, 1))


def _matmul_both_batched(b, a, c, kind):
    """Each member its own product: broadcast multiply, then sum over the shared axis."""
    if kind == (1, 1):
        return b.call("sum", b.mul(a, c), axis=0)
    if kind == (2, 1):
        return b.call("sum", b.mul(a, c), axis=1)
    if kind == (1, 2):
        return b.call("sum", b.mul(getitem(b, a, [FULL_SLICE, ("none",)]), c), axis=0)
    return b.call("sum", b.mul(getitem(b, a, [FULL_SLICE, FULL_SLICE, ("none",)]), c), axis=1)


def _outer_shape(shapes, args, params):
    sizes = (product(shapes.of(args[0])), product(shapes.of(args[1])))
    return None if None in sizes else sizes


def _outer_batch(b, args, batched, params, size):
    a, c = args
    column = getitem(b, a, [FULL_SLICE, ("none",)] + ([] if batched[0] else [("none",)]))
    row = getitem(b, c, [("none",), FULL_SLICE] + ([] if batched[1] else [("none",)]))
    return b.mul(column, row)


# a product of two vectors is fused as a sum of their products: an accumulator starting at 0
define("matmul", matmul_type, "rt.matmul(_0, _1)", kinds={BILINEAR, FRESH, OWNED_RESULT, C_ORDERED_RESULT}, vjp=_matmul_vjp,
       shape=_matmul_shape, batch=_matmul_batch, accumulator=Accumulator(0.0))
define("outer", lambda t, p, c=None: Type(promote_dtypes(t[0].dtype, t[1].dtype), 2), "np.outer(_0, _1)",
       kinds={BILINEAR, FRESH, C_ORDERED_RESULT}, vjp=_outer_vjp, shape=_outer_shape, batch=_outer_batch)


def _diag_vjp(b, g, out, args, params, active):
    return [b.call("diag_adjoint", g, args[0])]


def _diag_adjoint_vjp(b, g, out, args, params, active):
    return [b.call("diag", g), None]


def _trace_vjp(b, g, out, args, params, active):
    x = args[0]
    return [b.call("diag_adjoint", b.call("broadcast_to_shape", g, b.call("diag", x)), x)]


def _diag_shape(shapes, args, params):
    shape = shapes.of(args[0])
    return (shape[0], shape[0]) if len(shape) == 1 else None


def _identity_like(b, x, axis):
    """The identity matrix of ``x``'s length along ``axis``, in ``x``'s dtype, with a
    length-1 last axis."""
    identity = b.call("eye", b.call("dim", x, axis=axis))
    if identity.type.dtype != x.type.dtype:
        identity = b.call("as_dtype", identity, dtype=x.type.dtype)
    return with_unit_batch_axis(b, identity)


def _diag_batch(b, args, batched, params, size):
    x = args[0]
    if x.type.ndim == 2:  # vectors (n, size) -> diagonal matrices (n, n, size)
        return b.mul(getitem(b, x, [FULL_SLICE, ("none",)]), _identity_like(b, x, 0))
    return b.call("sum", b.mul(x, _identity_like(b, x, 0)), axis=1)  # the diagonals, (n, size)


def _diag_adjoint_batch(b, args, batched, params, size):
    """The adjoint of ``diag`` of a vector is the diagonal (of a matrix: a matrix of x's shape)."""
    if logical_ndim(args[1], batched[1]) != 1:
        return None
    return _diag_batch(b, args[:1], batched[:1], params, size)


def _trace_batch(b, args, batched, params, size):
    return b.call("sum", _diag_batch(b, args, batched, params, size), axis=0)


# np.diag of a matrix is a (read-only) view, of a vector a new matrix: ir/memory.py tells them apart
define("diag", lambda t, p, c=None: Type(t[0].dtype, 3 - t[0].ndim), "np.diag(_0)", vjp=_diag_vjp, linear_in=(0,),
       shape=_diag_shape, batch=_diag_batch)
define("diag_adjoint", lambda t, p, c=None: t[1], "rt.diag_adjoint(_0, _1)", kinds={RULE_ONLY},
       vjp=_diag_adjoint_vjp, linear_in=(0,), shape_only=(1,), batch=_diag_adjoint_batch)
define("trace", lambda t, p, c=None: Type(t[0].dtype, 0), "np.trace(_0)", vjp=_trace_vjp, linear_in=(0,),
       batch=_trace_batch)
