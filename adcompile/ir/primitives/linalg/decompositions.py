"""Matrix decompositions: ``np.linalg.eigh``, ``svd`` (reduced) and ``qr`` (reduced).

The IR has one result per primitive, so each returned array is a primitive of its own
(``eigh_values``, ``eigh_vectors``; ``svd_u``, ``svd_values``, ``svd_vt``; ``qr_q``,
``qr_r``), the decomposition being recomputed by each one used. Their rules are the standard
closed forms (as in JAX's ``lax.linalg``), built from matmuls and elementwise primitives so
that they differentiate again:

* eigh, for a symmetric A with distinct eigenvalues: dw = diag(V^T dA V),
  dV = V (F o V^T dA V) with F_ij = 1 / (w_j - w_i) off the diagonal; the reverse rule is the
  transpose, symmetrised (A is read as symmetric: perturbations are symmetrised, as JAX does);
* svd, for distinct non-zero singular values: the same with F_ij = 1 / (s_j^2 - s_i^2), plus
  the terms of the complement of U's (tall A) or V's (wide A) column space, which vanish
  when that space is empty, so both are always included (shapes are run-time values);
* qr, for a square or tall A of full rank (R invertible): JAX's rule through
  ``right_divide(X, R) = X R^-1``. The rules read R through ``square_qr_factor``, which
  raises a clear error for a wide A (more columns than rows: R is not square) instead of
  a LAPACK one.

Repeated eigen/singular values make F infinite: the derivative of the vectors is undefined
there (the values' derivative stays right). The rules read eigenvalues equal up to rounding
as equal and zero singular values (a rank-deficient A) as exact zeros, and take the
derivative along perturbations that keep them so (``_eigh_inverse_gaps``, ``_svd_nonzero``).
"""
import numpy as np

from ...nodes import const
from ...types import Type, to_float
from ..declare import ONE_DTYPE_OPERANDS, RULE_ONLY, VIEW, define
from ..shape_rules import same_as_argument


def _float_matrix(types, params, consts=None):
    return Type(to_float(types[0].dtype), 2)


def _float_vector(types, params, consts=None):
    return Type(to_float(types[0].dtype), 1)


# ------------------------------------------------------------------ matrix pieces of the rules
def _t(b, x):
    return b.call("transpose", x)


def _mm(b, x, y):
    return b.call("matmul", x, y)


def _row(b, v):
    return b.call("expand_axis", v, axis=0)


def _col(b, v):
    return b.call("expand_axis", v, axis=1)


def _symmetrised(b, m):
    return b.mul(b.add(m, _t(b, m)), const(0.5))


def _identity_like(b, v):
    """The identity matrix of v's length and dtype."""
    eye = b.call("eye", b.call("dim", v, axis=0))
    return eye if v.type.dtype == "f8" else b.call("as_dtype", eye, dtype=v.type.dtype)


def _inverse_gaps(b, v, skipped=None):
    """F_ij = 1 / (v_j - v_i) off the diagonal, 0 on it and where the 0/1 matrix ``skipped`` is 1."""
    excluded = _identity_like(b, v)
    if skipped is not None:
        excluded = b.call("maximum", excluded, skipped)
    gaps = b.sub(_row(b, v), _col(b, v))
    return b.div(b.sub(const(1.0), excluded), b.add(gaps, excluded))


def _diag_of_product(b, x, y):
    """diag(x^T y), without forming the product."""
    return b.call("sum", b.mul(x, y), axis=0)


def _strictly_lower(b, m):
    """tril(m, -1)."""
    index = b.call("arange", b.call("dim", m, axis=0))
    below = b.call("gt", _col(b, index), _row(b, index))
    return b.mul(m, b.call("as_dtype", below, dtype=m.type.dtype))


# ------------------------------------------------------------------ eigh
def _eigh_values_vjp(b, g, out, args, params, active):
    vectors = b.call("eigh_vectors", args[0])
    return [_mm(b, b.mul(vectors, g), _t(b, vectors))]


def _eigh_values_jvp(b, tangents, out, args, params, prim):
    vectors = b.call("eigh_vectors", args[0])
    return _diag_of_product(b, vectors, _mm(b, tangents[0], vectors))


# Eigenvalues equal up to rounding (an identity times x, a matrix that is exactly zero) make
# the eigenvectors of their subspace any basis of it: F_ij there is 0, not 1 / (rounding
# noise), as for two zero singular values (the pseudo-inverse on the degenerate subspace). It
# gives the derivative along perturbations that keep the eigenvalues equal -- the only ones
# along which a function of the eigenvectors can be smooth there, and the exact derivative of
# spectral functions (sum(w ** 2), eigvalsh of x * I) -- where dividing gave 0 * inf = NaN
# (random program 44006428: the hvp of a function of eigvalsh(A - A)). Two eigenvalues are
# equal when their gap is at most numpy's rank tolerance for A (n * eps * |w|, as for svd).
def _eigh_inverse_gaps(b, a, w):
    """F_ij = 1 / (w_j - w_i) for eigenvalues w of ``a``, 0 where they are equal up to rounding."""
    dtype = w.type.dtype
    tolerance = b.mul(b.mul(b.call("dim", a, axis=0), const(float(np.finfo(np.dtype(dtype)).eps))),
                      b.call("norm", w))
    apart = b.call("as_dtype", b.call("gt", b.call("abs", b.sub(_row(b, w), _col(b, w))), tolerance), dtype=dtype)
    return _inverse_gaps(b, w, skipped=b.sub(const(1.0), apart))


def _eigh_vectors_vjp(b, g, out, args, params, active):
    gaps = _eigh_inverse_gaps(b, args[0], b.call("eigh_values", args[0]))
    inner = b.mul(gaps, _mm(b, _t(b, out), g))
    return [_symmetrised(b, _mm(b, _mm(b, out, inner), _t(b, out)))]


def _eigh_vectors_jvp(b, tangents, out, args, params, prim):
    gaps = _eigh_inverse_gaps(b, args[0], b.call("eigh_values", args[0]))
    projected = _mm(b, _t(b, out), _mm(b, _symmetrised(b, tangents[0]), out))
    return _mm(b, out, b.mul(gaps, projected))


define("eigh_values", _float_vector, "np.linalg.eigvalsh(_0)", vjp=_eigh_values_vjp, jvp=_eigh_values_jvp,
       shape=lambda shapes, args, params: shapes.of(args[0])[:-1])
define("eigh_vectors", _float_matrix, "np.linalg.eigh(_0)[1]", vjp=_eigh_vectors_vjp, jvp=_eigh_vectors_jvp,
       shape=same_as_argument(0))


# ------------------------------------------------------------------ svd
def _svd_parts(b, a):
    return b.call("svd_u", a), b.call("svd_values", a), b.call("svd_vt", a)


# The singular values the svd rules divide by. A singular value at or below numpy's rank
# tolerance (``np.linalg.matrix_rank``: max(m, n) * eps * s_max, here with the 2-norm of s for
# s_max: larger by at most sqrt(k), and 0 for an empty matrix) is a zero that LAPACK returned
# as rounding noise (a rank-deficient A, e.g. ``x * np.ones((4, 3))``, has s = [s0, 1e-17, 1e-17]),
# and the rules read it as an exact zero: 1 / s is 0 for it (the pseudo-inverse), and so is F_ij
# for two of them. This is the derivative along perturbations that keep the rank (the only ones
# along which a function of the singular values or vectors of A can be smooth there: the
# nuclear norm has a kink, sum(s ** 2) does not depend on the null vectors at all); dividing
# by the noise instead multiplied rounding errors of ~1e-16 by 1e17-1e34 (random program
# 44004932: an hvp of 1e15 for one of 1). Every division by a singular value or a gap of
# squared singular values in the four rules below goes through these two functions.
def _svd_nonzero(b, a, s):
    """1 where the singular value s_i of ``a`` is above the rank tolerance, else 0 (in s's dtype)."""
    dtype = s.type.dtype
    largest = b.call("maximum", b.call("dim", a, axis=0), b.call("dim", a, axis=1))
    tolerance = b.mul(b.mul(largest, const(float(np.finfo(np.dtype(dtype)).eps))), b.call("norm", s))
    return b.call("as_dtype", b.call("gt", s, tolerance), dtype=dtype)


def _svd_inverse_gaps_and_reciprocals(b, a, s):
    """F_ij = 1 / (s_j^2 - s_i^2) (0 on the diagonal and between two zero singular values) and
    1 / s_i (0 for a zero singular value) -- zero as ``_svd_nonzero`` reads it."""
    nonzero = _svd_nonzero(b, a, s)
    zero = b.sub(const(1.0), nonzero)
    gaps = _inverse_gaps(b, b.mul(s, s), skipped=b.mul(_col(b, zero), _row(b, zero)))
    return gaps, b.div(nonzero, b.add(s, zero))


def _svd_values_vjp(b, g, out, args, params, active):
    u, _, vt = _svd_parts(b, args[0])
    return [_mm(b, b.mul(u, g), vt)]


def _svd_values_jvp(b, tangents, out, args, params, prim):
    u, _, vt = _svd_parts(b, args[0])
    return _diag_of_product(b, u, _mm(b, tangents[0], _t(b, vt)))


def _svd_u_vjp(b, g, out, args, params, active):
    # U (J + J^T) S V^T + (I - U U^T) g S^-1 V^T with J = F o (U^T g)
    u, s, vt = _svd_parts(b, args[0])
    gaps, reciprocals = _svd_inverse_gaps_and_reciprocals(b, args[0], s)
    j = b.mul(gaps, _mm(b, _t(b, u), g))
    core = _mm(b, u, b.mul(b.add(j, _t(b, j)), _row(b, s)))
    outside = b.mul(b.sub(g, _mm(b, u, _mm(b, _t(b, u), g))), _row(b, reciprocals))
    return [_mm(b, b.add(core, outside), vt)]


def _svd_vt_vjp(b, g, out, args, params, active):
    # U S (K + K^T) V^T + U S^-1 g (I - V V^T) with K = F o (V^T g^T), g the cotangent of V^T
    u, s, vt = _svd_parts(b, args[0])
    gaps, reciprocals = _svd_inverse_gaps_and_reciprocals(b, args[0], s)
    k = b.mul(gaps, _mm(b, vt, _t(b, g)))
    core = b.mul(_col(b, s), b.add(k, _t(b, k)))
    outside = b.mul(b.sub(g, _mm(b, _mm(b, g, _t(b, vt)), vt)), _col(b, reciprocals))
    return [_mm(b, u, b.add(_mm(b, core, vt), outside))]


def _svd_u_jvp(b, tangents, out, args, params, prim):
    # U (F o (dS S + S dS^T)) + (dA V - U dS) S^-1 with dS = U^T dA V
    u, s, vt = _svd_parts(b, args[0])
    gaps, reciprocals = _svd_inverse_gaps_and_reciprocals(b, args[0], s)
    da_v = _mm(b, tangents[0], _t(b, vt))
    ds = _mm(b, _t(b, u), da_v)
    scaled = b.mul(ds, _row(b, s))
    core = _mm(b, u, b.mul(gaps, b.add(scaled, _t(b, scaled))))
    return b.add(core, b.mul(b.sub(da_v, _mm(b, u, ds)), _row(b, reciprocals)))


def _svd_vt_jvp(b, tangents, out, args, params, prim):
    # the transpose of V (F o (S dS + dS^T S)) + (dA^T U - V dS^T) S^-1, with dS = U^T dA V
    u, s, vt = _svd_parts(b, args[0])
    gaps, reciprocals = _svd_inverse_gaps_and_reciprocals(b, args[0], s)
    ut_da = _mm(b, _t(b, u), tangents[0])
    ds = _mm(b, ut_da, _t(b, vt))
    scaled = b.mul(_col(b, s), ds)
    core = _mm(b, _t(b, vt), b.mul(gaps, b.add(scaled, _t(b, scaled))))
    return b.add(_t(b, core), b.mul(b.sub(ut_da, _mm(b, ds, vt)), _col(b, reciprocals)))


define("svd_values", _float_vector, "rt.singular_values(_0)", vjp=_svd_values_vjp, jvp=_svd_values_jvp)
define("svd_u", _float_matrix, "np.linalg.svd(_0, full_matrices=False)[0]", vjp=_svd_u_vjp, jvp=_svd_u_jvp)
define("svd_vt", _float_matrix, "np.linalg.svd(_0, full_matrices=False)[2]", vjp=_svd_vt_vjp, jvp=_svd_vt_jvp)


# ------------------------------------------------------------------ qr
def _right_divide_vjp(b, g, out, args, params, active):
    # out = X R^-1: bX = g R^-T, bR = -out^T bX
    x_bar = b.call("right_divide", g, _t(b, args[1]))
    return [x_bar if active[0] else None, b.neg(_mm(b, _t(b, out), x_bar)) if active[1] else None]


def _right_divide_jvp(b, tangents, out, args, params, prim):
    dx, dr = tangents
    change = dx if dr is None else (b.neg(_mm(b, out, dr)) if dx is None else b.sub(dx, _mm(b, out, dr)))
    return b.call("right_divide", change, args[1])


# right_divide(X, R) = X R^-1 (R square and invertible)
define("right_divide", lambda t, p, c=None: Type(to_float(t[0].dtype), 2), "np.linalg.solve(_1.T, _0.T).T",
       kinds={RULE_ONLY, ONE_DTYPE_OPERANDS}, vjp=_right_divide_vjp, jvp=_right_divide_jvp)


def _square_qr_factor_vjp(b, g, out, args, params, active):
    return [g]


# R of qr(A), checked to be square: the qr rules need A with at least as many rows as columns
define("square_qr_factor", lambda t, p, c=None: t[0], "rt.square_qr_factor(_0)", kinds={VIEW, RULE_ONLY},
       vjp=_square_qr_factor_vjp, linear_in=(0,))


def _qr_factors(b, a):
    return b.call("qr_q", a), b.call("square_qr_factor", b.call("qr_r", a))


def _qr_tangents(b, da, a):
    """JAX's qr_jvp_rule: C = Q^T dA R^-1, O = tril(C, -1) - tril(C, -1)^T,
    dQ = Q (O - C) + dA R^-1, dR = (C - O) R."""
    q, r = _qr_factors(b, a)
    z = b.call("right_divide", da, r)
    c = _mm(b, _t(b, q), z)
    lower = _strictly_lower(b, c)
    skew = b.sub(lower, _t(b, lower))
    return q, r, z, c, skew


def _qr_q_jvp(b, tangents, out, args, params, prim):
    q, r, z, c, skew = _qr_tangents(b, tangents[0], args[0])
    return b.add(_mm(b, q, b.sub(skew, c)), z)


def _qr_r_jvp(b, tangents, out, args, params, prim):
    q, r, z, c, skew = _qr_tangents(b, tangents[0], args[0])
    return _mm(b, b.sub(c, skew), r)


def _qr_pullback(b, a, q_bar, r_bar):
    # the transpose of the forward rule: M = bR R^T - Q^T bQ, bC = M - tril(M - M^T, -1),
    # bA = (bQ + Q bC) R^-T
    q, r = _qr_factors(b, a)
    m = b.neg(_mm(b, _t(b, q), q_bar)) if r_bar is None else _mm(b, r_bar, _t(b, r))
    if r_bar is not None and q_bar is not None:
        m = b.sub(m, _mm(b, _t(b, q), q_bar))
    c_bar = b.sub(m, _strictly_lower(b, b.sub(m, _t(b, m))))
    z_bar = _mm(b, q, c_bar) if q_bar is None else b.add(q_bar, _mm(b, q, c_bar))
    return b.call("right_divide", z_bar, _t(b, r))


def _qr_q_vjp(b, g, out, args, params, active):
    return [_qr_pullback(b, args[0], g, None)]


def _qr_r_vjp(b, g, out, args, params, active):
    return [_qr_pullback(b, args[0], None, g)]


define("qr_q", _float_matrix, "np.linalg.qr(_0)[0]", vjp=_qr_q_vjp, jvp=_qr_q_jvp)
define("qr_r", _float_matrix, "np.linalg.qr(_0)[1]", vjp=_qr_r_vjp, jvp=_qr_r_jvp)
