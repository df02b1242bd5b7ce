"""Linear solves and determinants: solve, inv, det, the log-determinant and its sign, cholesky.

Every rule is written with these same primitives (and matmul, transpose, trace), so that
second derivatives come from differentiating the rules. The closed forms, for x = solve(A, b)
and a cotangent g of the result:

    solve     bb = solve(A.T, g), bA = -bb x.T          dx = solve(A, db - dA x)
    inv       bA = -inv.T g inv.T                       d inv = -inv dA inv
    det       bA = g det inv(A).T                       d det = det trace(solve(A, dA))
    logabsdet bA = g inv(A).T                           d logabsdet = trace(solve(A, dA))
    cholesky  (below, with the half-diagonal lower triangle ``phi`` of Murray 2016)

numpy's cholesky reads only the lower triangle of A, so its derivative is taken with respect
to that triangle (the upper one gets a zero cotangent), as numpy's value depends on it.
"""
from ...types import Type, promote_dtypes, to_float
from ..declare import NON_DIFFERENTIABLE, ONE_DTYPE_OPERANDS, RULE_ONLY, define
from ..shape_rules import same_as_argument
from ..type_rules import float_of_first


def _float_scalar(types, params, consts=None):
    return Type(to_float(types[0].dtype), 0)


def _solve_type(types, params, consts=None):
    return Type(to_float(promote_dtypes(types[0].dtype, types[1].dtype)), types[1].ndim)


def _solve_vjp(b, g, out, args, params, active):
    a = args[0]
    gb = b.call("solve", b.call("transpose", a), g)
    ga = None
    if active[0]:
        ga = b.neg(b.call("outer", gb, out) if out.type.ndim == 1 else
                   b.call("matmul", gb, b.call("transpose", out)))
    return [ga, gb if active[1] else None]


def _solve_jvp(b, tangents, out, args, params, prim):
    da, db = tangents
    rhs = db
    if da is not None:
        moved = b.call("matmul", da, out)
        rhs = b.neg(moved) if db is None else b.sub(db, moved)
    return b.call("solve", args[0], rhs)


def _solve_batch(b, args, batched, params, size):
    """``solve(a, B)``: the members are right-hand sides, solved together."""
    a, rhs = args
    if batched[0]:
        return None
    if rhs.type.ndim == 2:
        return b.call("solve", a, rhs)
    n, p = b.call("dim", rhs, axis=0), b.call("dim", rhs, axis=1)
    solved = b.call("solve", a, b.call("reshape", rhs, n, b.mul(p, size)))
    return b.call("reshape", solved, n, p, size)


define("solve", _solve_type, "np.linalg.solve(_0, _1)", kinds={ONE_DTYPE_OPERANDS}, vjp=_solve_vjp, jvp=_solve_jvp,
       shape=same_as_argument(1), batch=_solve_batch)


def _inv_vjp(b, g, out, args, params, active):
    out_t = b.call("transpose", out)
    return [b.neg(b.call("matmul", b.call("matmul", out_t, g), out_t))]


def _inv_jvp(b, tangents, out, args, params, prim):
    return b.neg(b.call("matmul", b.call("matmul", out, tangents[0]), out))


define("inv", float_of_first, "np.linalg.inv(_0)", vjp=_inv_vjp, jvp=_inv_jvp, shape=same_as_argument(0))


def _inverse_transposed(b, a):
    return b.call("transpose", b.call("inv", a))


def _trace_of_solve(b, a, da):
    return b.call("trace", b.call("solve", a, da))


def _det_vjp(b, g, out, args, params, active):
    return [b.mul(b.mul(g, out), _inverse_transposed(b, args[0]))]


def _det_jvp(b, tangents, out, args, params, prim):
    return b.mul(out, _trace_of_solve(b, args[0], tangents[0]))


def _logabsdet_vjp(b, g, out, args, params, active):
    return [b.mul(g, _inverse_transposed(b, args[0]))]


def _logabsdet_jvp(b, tangents, out, args, params, prim):
    return _trace_of_solve(b, args[0], tangents[0])


define("det", _float_scalar, "np.linalg.det(_0)", vjp=_det_vjp, jvp=_det_jvp)
# np.linalg.slogdet(A) is the pair (slogdet_sign(A), logabsdet(A)); the sign is piecewise constant
define("logabsdet", _float_scalar, "np.linalg.slogdet(_0)[1]", vjp=_logabsdet_vjp, jvp=_logabsdet_jvp)
define("slogdet_sign", _float_scalar, "np.linalg.slogdet(_0)[0]", kinds={NON_DIFFERENTIABLE})


def _phi_vjp(b, g, out, args, params, active):
    return [b.call("tril_half_diagonal", g)]  # a 0/0.5/1 mask: its own adjoint


define("tril_half_diagonal", float_of_first, "rt.tril_half_diagonal(_0)", kinds={RULE_ONLY}, vjp=_phi_vjp,
       linear_in=(0,))


def _solve_both_sides(b, m, x):
    """m^-1 x m^-T (two solves)."""
    left = b.call("solve", m, x)
    return b.call("transpose", b.call("solve", m, b.call("transpose", left)))


def _cholesky_vjp(b, g, out, args, params, active):
    # P = phi(L^T g), Q = L^-T P L^-1; the lower triangle read by numpy gets phi(Q + Q^T)
    low_t = b.call("transpose", out)
    q = _solve_both_sides(b, low_t, b.call("tril_half_diagonal", b.call("matmul", low_t, g)))
    return [b.call("tril_half_diagonal", b.add(q, b.call("transpose", q)))]


def _cholesky_jvp(b, tangents, out, args, params, prim):
    # dM: the symmetric matrix of the lower triangle of dA; dL = L phi(L^-1 dM L^-T)
    half = b.call("tril_half_diagonal", tangents[0])
    sym = b.add(half, b.call("transpose", half))
    return b.call("matmul", out, b.call("tril_half_diagonal", _solve_both_sides(b, out, sym)))


define("cholesky", float_of_first, "np.linalg.cholesky(_0)", vjp=_cholesky_vjp, jvp=_cholesky_jvp,
       shape=same_as_argument(0))
