"""Table-driven checks of every derivative rule of the straight-line language (issue 2).

Each entry of the table is a small Python function exercising one operator, numpy function,
method or subscript form, registered with ``@case(arg generators..., options)``. Its output
may be a scalar or an array. For every entry:

* gradient: ``adcompile.grad`` of the scalar loss ``sum(sin(op(*args)))`` (the op is inlined
  into a one-line wrapper) against central finite differences of the plain Python loss,
  along a random direction in all float arguments at once;
* transpose identity: ``<v, J u> == <J^T v, u>`` where ``J^T v`` is the pullback of
  ``adcompile.vjp`` applied to a random cotangent ``v`` of the op's output and ``J u`` is a
  central difference of the plain Python op along a random ``u``;
* the forward run of the compiled op equals the plain Python op.

Everything runs in float64 with the python backend; entries marked ``f32`` also run in
float32 (the gradient must come back float32), entries marked ``numba`` also run through
numba, whose results must equal the plain-Python run of the same generated code.

Tolerances (stated once, used everywhere):
* float64: step 1e-5 for central differences (truncation ~1e-10, round-off ~1e-11 relative);
  agreement ``|a - b| <= RTOL64 * max(|a|, |b|) + ATOL64 * scale`` with RTOL64 = 1e-6,
  ATOL64 = 1e-8, ``scale`` the size of the terms summed in the inner products.
* float32: the float32 gradient is compared with a float64 finite difference taken at the
  same (float32-representable) point: RTOL32 = 2e-3, ATOL32 = 1e-4 * scale.
* numba vs plain Python run of the same source: rtol 1e-10, atol 1e-12 (the two may sum in
  a different order, nothing else).

numba compiles cost seconds each, so the numba subset is a few real programs (logistic
loss, softmax cross-entropy) and ``mix_*`` entries that put many emission templates into
one compiled function.
"""
import functools
import math

import numpy as np
import pytest

import adcompile
from oracles import (assert_close_scaled, assert_close_through, assert_transpose_identity, directional_difference,
                     inner)

RTOL64, ATOL64, STEP64 = 1e-6, 1e-8, 1e-5
RTOL32, ATOL32 = 2e-3, 1e-4
RTOL_NUMBA, ATOL_NUMBA = 1e-10, 1e-12


# ----------------------------------------------------------------------------- generators
# A generator maps a numpy Generator to one argument value (float64 or int); the table
# states the domain of each argument, so that log sees positives and arcsin |x| < 1.
def _gen(draw, shape):
    def make(rng):
        value = draw(rng, shape)
        return float(value) if shape == () else value
    return make


def normal(*shape):
    return _gen(lambda rng, s: rng.standard_normal(s), shape)


def positive(*shape, low=0.5, high=2.0):
    return _gen(lambda rng, s: rng.uniform(low, high, s), shape)


def unit(*shape):
    """Inside (-0.8, 0.8): the domain of arcsin/arccos with margin."""
    return _gen(lambda rng, s: rng.uniform(-0.8, 0.8, s), shape)


def away(*shape):
    """|x| in [0.3, 2]: away from the kinks of abs/sign at zero."""
    return _gen(lambda rng, s: rng.uniform(0.3, 2.0, s) * rng.choice([-1.0, 1.0], s), shape)


def off_grid(*shape):
    """x = k + 0.2..0.3 or k + 0.7..0.8: away from the jumps of floor, ceil and round."""
    return _gen(lambda rng, s: rng.integers(-3, 3, s) + rng.choice([0.25, 0.75], s)
                + rng.uniform(-0.05, 0.05, s), shape)


def spread(*shape):
    """Distinct values at least 0.1 apart (for max/min/maximum/clip: no ties, no kinks)."""
    def draw(rng, s):
        n = int(np.prod(s))
        return (rng.permutation(n) * 0.37 - 0.37 * n / 2 + rng.uniform(-0.1, 0.1, n)).reshape(s)
    return _gen(draw, shape)


def fixed(value):
    """A non-float argument (int, int array) taken as it is."""
    return lambda rng: value


# ----------------------------------------------------------------------------- the table
class Case:
    def __init__(self, fn, gens, f32, numba, rtol):
        self.fn, self.gens, self.f32, self.numba, self.rtol = fn, gens, f32, numba, rtol
        self.name = fn.__name__

    def args(self, dtype=np.float64, seed=0):
        rng = np.random.default_rng(seed)
        return [_as_dtype(g(rng), dtype) for g in self.gens]

    def __repr__(self):
        return self.name


CASES = []


def case(*gens, f32=False, numba=False, rtol=1.0):
    """Register the op below; ``rtol`` scales the tolerances for ill-conditioned entries.
    ``numba="slow"``: its numba check runs in the long profile only (``pytest -m slow``): each
    numba compile costs seconds, so the default run keeps a sample of each section."""
    def register(fn):
        CASES.append(Case(fn, gens, f32, numba, rtol))
        return fn
    return register


def _as_dtype(value, dtype):
    if isinstance(value, float):
        return dtype(value) if dtype is np.float32 else value
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(dtype)
    return value


# --- operators and broadcasting ---------------------------------------------------------
@case(normal(3, 1), normal(1, 4), f32=True)
def add_3x1_1x4(a, b):
    return a + b


@case(normal(4, 3), normal(3))
def sub_4x3_3(a, b):
    return a - b


@case(normal(), normal(2, 3), f32=True)
def mul_scalar_array(s, a):
    return s * a


@case(normal(3, 4), positive(4), f32=True)
def div_4x3_by_row(a, b):
    return a / b


@case(positive(3, 1), normal(1, 2))
def pow_array_array(a, b):
    return a ** b


@case(positive(5), normal())
def pow_array_scalar(a, s):
    return a ** s + 2.0 ** s


@case(normal(5))
def pow_constant_exponents(a):
    return a ** 3 + a ** 2 - 0.5 * a ** 1


@case(normal(2, 3), normal(3, 4), f32=True, numba=True)
def matmul_2d_2d(a, b):
    return a @ b


@case(normal(3, 4), normal(4))
def matmul_2d_1d(a, v):
    return a @ v


@case(normal(3), normal(3, 2))
def matmul_1d_2d(v, a):
    return v @ a


@case(normal(4), normal(4))
def matmul_1d_1d(v, w):
    return v @ w


@case(normal(3, 2))
def unary_minus(a):
    return -a + (-(a * 2.0))


@case(normal(4), normal())
def augmented_ops(a, s):
    y = a * 1.0
    y += s
    y *= a
    y -= 2.0 * s
    y /= 1.5
    return y


# --- builtins on scalars ------------------------------------------------------------------
@case(away(), normal())
def builtin_abs(x, y):
    return abs(x) * y


@case(spread(3))
def builtin_min_max(v):
    a, b, c = v[0], v[1], v[2]
    return min(a, b) + max(a, b, c) * 2.0 + min(c, 0.0 - 10.0)


@case(normal(), fixed(3))
def builtin_float_int(x, n):
    return float(n) * x + float(x) * x + int(n * 2) * x


@case(normal(5), normal())
def builtin_len(v, s):
    return len(v) * s + v * float(len(v))


# --- elementary functions (numpy under np, and math on scalars) ----------------------------
@case(normal(2, 3), f32=True)
def np_sin_cos_tan(x):
    return np.sin(x) + np.cos(x) * np.tan(0.5 * x)


@case(unit(2, 3), f32=True)
def np_arcsin_arccos(x):
    return np.arcsin(x) * np.arccos(x)


@case(normal(5))
def np_arctan(x):
    return np.arctan(x)


@case(normal(3, 1), away(4))
def np_arctan2(y, x):
    return np.arctan2(y, x)


@case(normal(4), f32=True)
def np_hyperbolic(x):
    return np.sinh(x) + np.cosh(x) + np.tanh(x)


@case(normal(4), f32=True)
def np_exp_expm1(x):
    return np.exp(x) + np.expm1(x)


@case(positive(4), f32=True)
def np_logs(x):
    return np.log(x) + np.log1p(x) + np.log2(x) + np.log10(x)


@case(positive(2, 2), f32=True)
def np_sqrt(x):
    return np.sqrt(x)


@case(normal(3, 1), away(4), f32=True)
def np_hypot(x, y):
    return np.hypot(x, y)


@case(normal(), away())
def math_hypot(x, y):
    return math.hypot(x, y) * x


@case(normal(3, 1), normal(4), f32=True)
def np_logaddexp(a, b):
    return np.logaddexp(a, b)


@case(normal(5))
def np_square(x):
    return np.square(x)


@case(away(5), f32=True)
def np_abs_sign(x):
    return np.abs(x) + np.sign(x) * x + np.absolute(x)


@case(positive(4), normal(4))
def np_power(x, y):
    return np.power(x, y) + np.power(x, 3)


@case(spread(3, 4), spread(4), f32=True)
def np_maximum_minimum(a, b):
    return np.maximum(a, b) + np.minimum(a, 0.2) * 2.0


@case(normal(3, 4), normal(4))
def np_where_arrays(a, b):
    return np.where(a > 0.0, a * b, b)


@case(normal(), normal())
def np_where_scalars(x, y):
    return np.where(x > y, x * x, 2.0 * y)


@case(spread(4, 3), f32=True)
def np_clip_array(x):
    return np.clip(x, -0.5, 0.6) + x.clip(-1.0, 1.0)


@case(spread(6), normal(), normal())
def np_clip_array_bounds(x, lo, hi):
    return np.clip(x, lo - 10.0, hi + 10.0) + np.clip(x, -0.3, 0.5)


@case(normal())
def np_clip_scalar(x):
    return np.clip(x, -0.3, 0.5) + np.clip(3.0 * x, 0.0, np.inf)


@case(off_grid(6), f32=True)
def np_floor_ceil_round(x):
    return x * np.floor(x) + np.ceil(x) * np.round(x) + x


@case(off_grid())
def np_floor_ceil_round_scalar(x):
    return x * np.floor(x) + np.ceil(x) * np.round(x) + round(x) * x


@case(off_grid(5), off_grid())
def round_decimals_and_integer_results(x, s):
    return np.round(x, 1) * x + np.around(x) * s + round(s, 1) * x + round(s) * s \
        + math.floor(s) * x + math.ceil(s) * s


@case(positive(), normal())
def math_functions(x, y):
    return (math.sin(y) + math.cos(y) + math.tan(0.3 * y) + math.exp(y) + math.log(x)
            + math.sqrt(x) + math.tanh(y) + math.atan2(y, x) + math.log1p(x) + math.expm1(y)
            + math.sinh(y) + math.cosh(y) + math.atan(y) + math.log10(x) + math.log2(x))


@case(unit())
def math_asin_acos(x):
    return math.asin(x) + 2.0 * math.acos(x)


@case(normal(4))
def np_constants(x):
    return np.pi * np.sin(x) + np.e * x + np.minimum(x, np.inf)


# --- reductions ----------------------------------------------------------------------------
@case(normal(3, 4), f32=True)
def sum_all_and_axes(x):
    return np.sum(x) + x.sum(axis=0)[1] + np.sum(x, axis=1)[0] + x.sum(axis=-1)[2]


@case(normal(3, 4))
def sum_keepdims(x):
    return x / np.sum(x * x, axis=1, keepdims=True) + x.sum(axis=0, keepdims=True)


@case(normal(2, 3, 3))
def sum_axis_tuple(x):
    return np.sum(x, axis=(0, 2)) + x.sum(axis=(0, 1), keepdims=True)[0, 0]


@case(normal(3, 4), f32=True)
def mean_axes(x):
    return np.mean(x) + x.mean(axis=0) + np.mean(x, axis=1, keepdims=True)


@case(positive(3, 4))
def prod_axes(x):
    return np.prod(x) + x.prod(axis=0) + np.prod(x, axis=1, keepdims=True)


def with_zeros(*shape):
    """Entries of size 0.5..1.5 with exact zeros: one in row 0, two in row 1, none elsewhere."""
    def draw(rng, s):
        x = rng.uniform(0.5, 1.5, s) * rng.choice([-1.0, 1.0], s)
        x[0, 1] = x[1, 0] = x[1, 2] = 0.0
        return x
    return _gen(draw, shape)


@case(spread(3, 4))
def max_min_axes(x):
    return (np.max(x) + x.min() + np.max(x, axis=0) + x.min(axis=1, keepdims=True)
            + np.amax(x, axis=-1, keepdims=True))


@case(normal(3, 4), f32=True)
def var_std(x):
    return np.var(x) + x.std() + np.var(x, axis=0) + x.std(axis=1, keepdims=True)


@case(normal(5))
def var_std_ddof(x):
    return np.var(x, ddof=1) + np.std(x, ddof=1)


@case(normal(6), f32=True)
def cumsum_1d(x):
    return np.cumsum(x) * x.cumsum()


@case(normal(2, 3))
def cumsum_2d_flat(x):
    return np.cumsum(x)


@case(normal(5), normal(2, 3), f32=True)
def linalg_norm(v, m):
    return np.linalg.norm(v) + np.linalg.norm(m) * np.linalg.norm(v)


@case(normal(2, 3))
def linalg_norm_axis(m):
    return (np.linalg.norm(m, axis=1) + np.linalg.norm(m, axis=0)[1:] + np.linalg.norm(m, axis=(0, 1))
            + np.linalg.norm(m, axis=-1, keepdims=True)[:, 0] + np.linalg.norm(m, keepdims=True)[0, 0])


# --- linear algebra ------------------------------------------------------------------------
@case(normal(4), normal(4), normal(3, 4))
def dot_forms(v, w, a):
    return np.dot(v, w) + np.dot(a, v) @ np.dot(a, w) + a.dot(v)[0] + np.dot(2.0, v)[1]


@case(normal(3, 4), normal(4, 2))
def np_matmul(a, b):
    return np.matmul(a, b)


@case(normal(3), normal(4), f32=True)
def np_outer(v, w):
    return np.outer(v, w)


@case(normal(2, 3))
def transpose_forms(a):
    return a.T @ a + np.transpose(a) @ a + a.transpose() @ a


@case(normal(2, 3, 4))
def transpose_3d_axes(x):
    return np.transpose(x, (1, 0, 2)) * 2.0 + x.transpose(1, 0, 2) + x.T[0][:, :, None]


@case(normal(3, 4), f32=True)
def reshape_forms(x):
    return np.reshape(x, (2, 6)) + x.reshape(2, 6) * 2.0 + x.reshape((2, -1))


@case(normal(3, 4))
def reshape_noncontiguous(x):
    return x.T.reshape(12) + x[:, ::2].reshape(6)[0]


@case(normal(2, 3))
def ravel_flatten(x):
    return np.ravel(x) + x.ravel() * x.flatten() + x.T.ravel()


@case(normal(3), fixed(np.array([0, 2])))
def scalar_reshape(v, idx):
    return np.reshape(v[1], (1, 1)) + v[idx][None, :]


# --- array creation ------------------------------------------------------------------------
@case(normal(3, 4))
def zeros_ones_empty(x):
    z = np.zeros(x.shape) + np.zeros((3, 4))
    o = np.ones(x.shape[1])
    e = np.empty((x.shape[0], x.shape[1]))
    e[:, :] = x * 2.0
    return (x + z) * o + e


@case(normal(3, 4), normal())
def full_forms(x, s):
    return x * np.full(x.shape, s) + np.full((3, 4), 2.0) + np.full(x.shape[1], s * s)


@case(normal(3, 4))
def like_forms(x):
    e = np.empty_like(x)
    e[:] = x
    return x * np.ones_like(x) + np.zeros_like(x) + e * 2.0


@case(normal())
def like_forms_scalar(s):
    return s * np.ones_like(s) + np.zeros_like(s)


@case(normal(4), f32=True)
def astype_float64(x):
    return x.astype(np.float64) * x + np.float64(x[0])


@case(normal(3))
def loop_carried_alias(x):
    y = x
    for _ in range(2):
        y = y * x
    return y


@case(normal(4))
def copy_forms(x):
    y = np.copy(x)
    z = x.copy()
    z[0] = 1.0
    return y * z


@case(normal(5), normal(), f32=True)
def arange_forms(x, s):
    n = x.shape[0]
    return x * np.arange(n) + np.arange(1, n + 1) * s + x * np.arange(0.0, 2.5, 0.5)


@case(normal(5), normal())
def linspace_eye(x, s):
    return x * np.linspace(0.0, 1.0, 5) + np.eye(5)[2] * s + np.eye(x.shape[0]) @ x


@case(normal(4), normal(3, 3), f32=True)
def diag_trace(v, a):
    return np.diag(v) * v[0] + np.diag(a)[1] + np.trace(a) + a.trace()


@case(normal(3), normal(2), normal(2, 3), normal(2, 2))
def concatenate_forms(v, w, a, b):
    return (np.concatenate((v, w, v)) + 1.0)[:5] * np.concatenate([a, b], axis=1)[1, :5] \
        + np.concatenate((a, a), axis=0)[3, 0]


@case(normal(3), normal(3), normal(2, 3), f32=True)
def stack_forms(v, w, a):
    return np.stack((v, w)) + np.stack([v, w], axis=1).T + np.stack((a, a), axis=2)[:, :, 1][0] * 3.0


@case(normal(3, 1), normal(2, 2))
def concatenate_mixed_layouts(a, b):
    return np.concatenate((a.T, b[:, ::2].T, b[::2, :]), axis=1)


# --- subscripts ----------------------------------------------------------------------------
@case(normal(6), f32=True)
def index_int_negative(x):
    return x[0] * x[-1] + x[-2]


@case(normal(9))
def index_slices_steps(x):
    return x[1:7:2] * x[::3] + x[::-3] + x[-3:]


@case(normal(3, 4))
def index_newaxis(x):
    return x[None, :, :] + x[:, np.newaxis, :] * x[:, None, 0:1] - x[None] * x[1, None, 1:2]


@case(normal(3, 4, 6), fixed(1), f32=True)
def index_multidim(a, i):
    return a[i, 1:, ::2] + a[-1, :-1, 1::2] * a[0, 2, 0]


@case(normal(4, 3), fixed(np.array([0, 2, 2, 1, 2])), f32=True, numba=True)
def gather_rows_repeated(w, idx):
    return w[idx] * 2.0 + w[idx, 1][:, None]


@case(normal(5), fixed(np.array([4, 0, 4, 4])))
def gather_1d_repeated(x, idx):
    return x[idx] * x[idx]


@case(normal(4, 3), fixed(np.array([2, 0, 2, 1])))
def gather_pairs_repeated(p, labels):
    n = labels.shape[0]
    return np.log(np.exp(p[np.arange(n), labels]) + 1.0) + p[labels, labels]


@case(normal(4, 3))
def shape_and_len(x):
    return x * float(x.shape[0]) + len(x) * x + x.size * x + x.ndim * x


# --- multiple steps ------------------------------------------------------------------------
@case(normal(3), normal(5, 3), fixed(np.array([1.0, 0.0, 1.0, 1.0, 0.0])), f32=True, numba=True)
def logistic_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


@case(normal(4, 3), fixed(np.array([0, 2, 2, 1])), numba=True)
def softmax_cross_entropy(z, labels):
    shifted = z - np.max(z, axis=1, keepdims=True)
    logp = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(z.shape[0]), labels])


# --- combined entries: one numba compile covers many emission templates ---------------------
@case(off_grid(), away(), unit(), positive(), numba=True)
def mix_scalars(x, y, u, p):
    a = np.where(x > y, x * y, y - x) + np.clip(x, -0.1, 0.1) + np.clip(y, 0.0, np.inf)
    b = np.floor(x) * y + np.ceil(x) * np.round(x) * y + round(x) * x + abs(y) + np.abs(x)
    c = min(x, y) + max(x, y, u) + np.maximum(x, u) + np.minimum(y, 0.5) + np.sign(y) * y
    d = math.sin(u) + math.asin(u) + np.arccos(u) + math.log(p) + np.sqrt(p) + p ** u
    return a + b * c + d + float(x) * np.arctan2(y, p) + np.tanh(u) + int(x) * p


@case(spread(3, 4), positive(3, 4), unit(4), numba=True)
def mix_piecewise(s, p, u):
    a = np.where(s > 0.0, s * p, p) + np.clip(s, -0.5, 0.6) + np.floor(s) * np.round(s, 1) * np.ceil(s) * s
    b = np.maximum(s, u) + np.minimum(s, 0.2) + np.abs(s) * np.sign(s) + np.power(p, u) + p ** 2.5
    return a * b


@case(positive(3, 4), unit(4))
def mix_ufuncs(p, u):
    c = np.log(p) + np.log1p(p) + np.log2(p) + np.log10(p) + np.sqrt(p) + np.exp(u) + np.expm1(u)
    d = np.sin(u) + np.cos(u) + np.tan(u) + np.arcsin(u) + np.arccos(u) + np.arctan(u)
    e = np.sinh(u) + np.cosh(u) + np.tanh(u) + np.arctan2(u, p) + np.square(u) - u / p
    return c + d * e


@case(spread(3, 4), positive(2, 3), numba=True)
def mix_reductions(x, p):
    a = np.sum(x, axis=1, keepdims=True) + x.mean(axis=0) + p.prod(axis=1)[0] + np.max(x, axis=0)
    b = x.min(axis=1, keepdims=True) * np.var(x) + np.cumsum(p)[3] * np.linalg.norm(x)
    return a * b


@case(normal(3, 4), normal(2, 2), normal(3), numba=True)
def mix_shapes(x, b, v):
    a = x.T.reshape(12)[:4] + x[:, ::2].reshape(6)[2:] + x.ravel()[5] * x.T.flatten()[1:5]
    c = np.concatenate((x[:, :1].T, b[:, ::2].T, b[::2, :]), axis=1) @ np.concatenate((x[0], x[1, :3]))
    d = np.stack((v, v * v), axis=1) + np.outer(v, b[0]) + np.diag(v)[:, :2] + np.diag(x[:, :3])[:, None]
    return np.sum(a) * np.trace(x[:, 1:]) + np.sum(c) + d @ b


@case(normal(3, 4, 6), fixed(np.array([0, 2, 2, 1, 2])), fixed(1), numba=True)
def mix_indexing(a, idx, i):
    w = a[1]
    b = a[i, 1:, ::2] + a[-1, :-1, 1::2] * a[0, 2, -1] + w[None, 1:, :3][0] + w[:, np.newaxis, 2][1:]
    c = w[idx] * 2.0 + w[idx, 1][:, None] + w[np.arange(5) % 4, idx][:, None] + w[::-2, 1:5:2][0, 0]
    return np.sum(b) + c + np.sum(np.transpose(a, (2, 0, 1))[1] * a[:, :, 0])


@case(normal(3, 4), normal(), normal(4), numba=True)
def mix_creation(x, s, v):
    z = np.zeros(x.shape) + np.ones((3, 4)) + np.full(x.shape, s) + np.full((3, 4), 2.0)
    e = np.empty((x.shape[0], x.shape[1]))
    e[:, :] = x * 2.0
    f = np.empty_like(x)
    f[:] = x * s
    y = np.copy(x) + x.copy() * np.ones_like(x) + np.zeros_like(x) + e + f
    n = v.shape[0]
    w = v * np.arange(n) + np.arange(1, n + 1) * s + v * np.linspace(0.0, 1.0, 4) + np.eye(n) @ v
    return (x + z) * y + w + np.eye(4)[1] * s + np.ones_like(s) * s


# --- issue 14: special functions and predicates ---
import scipy.special as sp  # noqa: E402  (imported here: the section stays one block)
from scipy import special  # noqa: E402
from scipy.special import erf, logsumexp, xlogy  # noqa: E402


@case(normal(5), f32=True)
def np_sinc(x):
    return np.sinc(x)


@case(fixed(np.array([0.0, 0.004, -0.009, 0.011, 1.0])))
def np_sinc_near_zero(x):
    return np.sinc(x) * (1.0 + x)


@case(away(5), normal(), f32=True)
def np_heaviside(x, h0):
    return np.heaviside(x, h0) * x + np.heaviside(x, 0.5)


@case(fixed(np.array([0, -2, 0, 3])), normal())
def np_heaviside_at_zero(k, h0):
    return np.heaviside(k, h0) * h0


@case(normal(6), fixed(np.array([0, 1, 2, 3, 0, 1])), normal(), f32=True)
def np_nan_to_num(x, k, s):
    z = np.where(k == 1, np.inf, np.where(k == 2, -np.inf, np.where(k == 3, np.nan, x)))
    return np.nan_to_num(z, nan=s, posinf=2.0 * s, neginf=-3.0) + np.nan_to_num(x * s)


@case(spread(3, 4))
def np_all_any(x):
    a = np.where(np.all(x > -1.0, axis=0), x[0], -x[1]) + np.where(np.any(x > 1.0, axis=1, keepdims=True), x, 2 * x)[1]
    b = x.all() * x[2] + (x > 0).any() * x[1] + np.all(x[0] > x[1]) * x[0] + np.any(x < -1e3) * x[2]
    return a + b + (x > 0).all(axis=1)[1] * x[0] + np.any(x[1, 2] > 0.0) * x[1]


@case(normal(), positive(low=0.2, high=0.8))
def math_special(x, p):
    return math.erf(x) * math.erfc(x) + math.lgamma(p + 1.0) * math.gamma(p) + math.lgamma(-p) + math.gamma(-p)


@case(normal(4), f32=True)
def sp_erf_erfc(x):
    return erf(x) + sp.erfc(2.0 * x) * special.erf(x - 1.0)


# erfcx below 12 and above, where the numba kernel switches to its asymptotic series
@case(normal(5), positive(5, low=12.5, high=30.0), f32=True, numba=True)
def sp_erfcx(x, far):
    return sp.erfcx(x) + special.erfcx(2.0 * x + 1.0) * x + 50.0 * sp.erfcx(far)


@case(positive(5, low=0.3, high=6.0), f32=True)
def sp_gammaln_digamma_gamma(p):
    return special.gammaln(p) + sp.digamma(p) + 0.1 * sp.gamma(p) + sp.psi(p + 1.0)


@case(positive(4, low=0.5, high=4.0), positive(4, low=1.2, high=1.8), normal())
def sp_polygamma_negative(p, q, x):
    return sp.polygamma(1, p) + 0.1 * sp.polygamma(3, p) + special.gammaln(-q) * x + sp.digamma(-q) + sp.gamma(-q)


@case(normal(4), positive(4, low=0.05, high=0.95), f32=True)
def sp_expit_logit(x, p):
    return sp.expit(3.0 * x) + special.logit(p) * sp.expit(x)


@case(fixed(np.array([-40.0, 40.0, -700.0, 3.0, 0.0])))
def sp_expit_far(x):
    return sp.expit(x) + np.log(sp.expit(x)) * 1e-3


@case(positive(4), positive(4), f32=True)
def sp_xlogy(x, y):
    return xlogy(x, y) + sp.xlogy(x[0], y)


@case(fixed(np.array([0, 2, 0, 1])), positive(4))
def sp_xlogy_zero_x(k, y):
    return xlogy(k, y) + xlogy(k * 1.0, y)


@case(normal(3, 4), f32=True)
def sp_logsumexp(x):
    return logsumexp(x, axis=1) + logsumexp(x) + logsumexp(x, axis=0, keepdims=True)[0, 1:] + sp.logsumexp(x[0])


@case(normal(3, 4), f32=True)
def sp_softmax_log_softmax(x):
    return sp.softmax(x, axis=1) + special.log_softmax(x, axis=0) * sp.softmax(x) + sp.log_softmax(x)


@case(normal(3), positive(3, low=0.4, high=3.0), away(3), numba=True)
def mix_special(x, p, a):
    c = erf(x) + sp.erfc(x) + special.gammaln(p) + sp.digamma(p) + sp.gamma(p) + sp.polygamma(1, p)
    d = sp.expit(x) + sp.logit(p / 4.0) + xlogy(p, p) + np.sinc(x) + np.heaviside(a, 0.5) * x
    e = np.nan_to_num(x / p) + logsumexp(x) + sp.softmax(x) + sp.log_softmax(x) + math.erf(x[0])
    return c * d + e + np.all(a > 0) * p + np.any(a > 0) * x + math.lgamma(p[1]) + math.gamma(p[2])
# --- issue 14: building and reshaping arrays, statistics ---
@case(normal(3), normal(2, 3), f32=True)
def np_tile(v, m):
    return np.tile(v, 2)[1:4] * np.tile(m, (2, 1))[:, 0][:3] + np.tile(v, (2, 1, 2))[1, 0, :3]


@case(normal(3), normal(2, 3), f32=True, numba="slow")
def np_repeat(v, m):
    return np.repeat(v, 2)[::2] + np.repeat(m, 2, axis=0)[3] * m.repeat(2, axis=1)[1, ::2] + np.repeat(m, 2)[:3]


@case(normal(3, 4), f32=True)
def np_triu_tril(m):
    return np.triu(m) + np.tril(m, -1) * m + np.triu(m, 2) * 3.0 + np.tril(m, k=1)


@case(normal(4), normal(3))
def np_meshgrid(a, b):
    X, Y = np.meshgrid(a, b)
    I, J = np.meshgrid(a, b, indexing="ij")
    return X * Y + (I * J).T + np.sin(X)


@case(normal(2, 3, 4))
def np_flip(x):
    return np.flip(x) + np.flip(x, axis=1) * x + np.flip(x, (0, 2)) + np.flipud(x) * np.fliplr(x)


@case(normal(3), normal(3, 2), f32=True)
def np_column_stack(v, m):
    return np.column_stack((v, m, v * v)) * 2.0 + np.column_stack([m, v, v])[:, ::-1] * v[:, None]


@case(normal(4), normal(3, 1), normal())
def np_broadcast_to(v, c, s):
    return np.broadcast_to(v, (3, 4)) * np.broadcast_to(c, (3, 4)) + np.broadcast_to(s, (3, 4)) \
        + np.broadcast_to(c, (2, 3, 4))[1]


@case(normal(2, 3, 4), f32=True, numba="slow")
def np_swapaxes_moveaxis(x):
    a = np.swapaxes(x, 0, 2) + x.swapaxes(0, -1) * np.moveaxis(x, 0, -1).transpose(1, 0, 2)
    return a + np.moveaxis(x, (0, 1), (2, 0)).transpose(1, 0, 2) + (np.swapaxes(x[0], 0, 1) @ x[1])[:3, :2]


@case(normal(3), normal(2, 3), normal())
def np_append(v, m, s):
    return np.append(v, s)[1:] * np.append(m, v)[:3] + np.append(m, m[:1], axis=0)[2] \
        + np.append(m, m, axis=1)[1, 2:5] + np.append(v, [s, 2.0])[2:]


@case(normal(6), normal(4, 5), f32=True, numba="slow")
def np_split(v, m):
    a, b, c = np.split(v, 3)
    p, q = np.split(m, [2], axis=1)
    parts = np.split(v, [1, -2])
    return a * b + c + p[:2, 0] + q[1, :2] + parts[2] * parts[0]


@case(normal(7), normal(3, 5))
def np_array_split(v, m):
    a, b, c = np.array_split(v, 3)
    p, q = np.array_split(m, 2, axis=1)
    return a[:2] * b + c + p[:, :2] * q[:, :2] + np.array_split(v, [3])[1][:2]


@case(normal(), normal(), normal(5), f32=True)
def np_linspace_differentiable(a, b, x):
    return np.linspace(a, b, 5) * x + np.linspace(a, 2.0, 5, endpoint=False) \
        + np.linspace(0.0, 1.0, num=5, endpoint=False) * b + np.linspace(-1.0, b, x.shape[0])


@case(spread(7), spread(6), spread(2, 3), f32=True)
def np_median(v, w, m):
    return np.median(v) * w + np.median(w) + np.median(m) * np.median(m, keepdims=True)[0]


@case(spread(3, 4), spread(2, 3, 5), numba="slow")
def np_median_axis(m, t):
    return np.median(m, axis=0) + np.median(m, axis=1, keepdims=True) + np.median(t, axis=1)[0, :4] \
        + np.median(t, axis=2)[1, 0] * np.median(t, axis=0)[0, :4] + np.median(m[:, 0], axis=0)


@case(spread(9), spread(4, 5), f32=True, numba=True)
def np_percentile_quantile(v, m):
    return np.percentile(v, 25) + np.quantile(v, [0.1, 0.5, 0.9]) * np.percentile(m, 70, axis=1)[:3] \
        + np.quantile(m, 0.35, axis=0)[1:4] + np.percentile(m, [20.0, 80.0], axis=1, keepdims=True)[1, :3, 0] \
        + np.quantile(m, 0.6) + np.percentile(v, 100) * np.quantile(v, 0.0, method="linear")


@case(spread(2, 3, 4))
def np_quantile_axis_3d(t):
    return np.quantile(t, 0.3, axis=1) + np.percentile(t, [10, 90], axis=-1)[1][:, :1] \
        + np.quantile(t, 0.5, axis=2, keepdims=True)[:, :1, 0]


@case(normal(5), positive(5), normal(3, 4), positive(4), f32=True)
def np_average(x, w, m, wm):
    a = np.average(m, axis=1, weights=wm)
    c, s = np.average(x, weights=w, returned=True)
    d, n = np.average(m, axis=0, returned=True)
    return a * np.average(m, weights=wm * m * m) + c * s + d[:3] * n[1:] \
        + np.average(m, axis=1, weights=wm, keepdims=True)[:, 0] + np.average(x)


@case(spread(3, 4), spread(5))
def np_ptp(m, v):
    return np.ptp(m, axis=1) * np.ptp(v) + np.ptp(m, axis=0)[:3] + np.ptp(m, axis=1, keepdims=True)[:, 0] + np.ptp(m)


@case(normal(3, 6), normal(6), normal(6, 2), f32=True)
def np_cov(m, v, t):
    return np.concatenate(((np.cov(m) + np.cov(m, bias=True) * np.cov(v) + np.cov(m, ddof=2)).ravel(),
                           (np.cov(t, rowvar=False) + np.cov(v, m[0]) + np.cov(t.T, v)[1:, 1:]).ravel()))


@case(normal(3, 6), normal(6), normal(6, 2), numba="slow")
def np_corrcoef(m, v, t):
    return np.concatenate((np.corrcoef(m).ravel(), np.corrcoef(v, m[1]).ravel(),
                           np.corrcoef(t, rowvar=False).ravel())) + np.corrcoef(v)


# --- entries outside CASES ----------------------------------------------------------------
# The prod rule is exact at zeros to first order only (its 0/1 masks are piecewise constant,
# so second derivatives at exact zeros are lost): these entries are not in CASES, whose
# second derivatives test_rules_second_order.py checks too.
def prod_with_zeros(x):
    return np.prod(x, axis=1) + x.prod(axis=0)[:3] + np.prod(x[0]) * np.prod(x[2:]) + np.prod(x[1])


FIRST_ORDER_ONLY = [Case(prod_with_zeros, (with_zeros(3, 4),), f32=True, numba=False, rtol=1.0)]


# ----------------------------------------------------------------------------- helpers
def _is_float(value):
    return isinstance(value, (float, np.floating)) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def _float_positions(args):
    return tuple(k for k, a in enumerate(args) if _is_float(a))


def _random_like(value, rng):
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape)
    return float(rng.standard_normal())


def _as_f64(args):
    return [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
            else float(a) if isinstance(a, np.floating) else a for a in args]


def _check_grad_like(grads, args, positions):
    for g, k in zip(grads, positions):
        assert np.shape(g) == np.shape(args[k]), f"gradient {k} has shape {np.shape(g)}, not {np.shape(args[k])}"
        assert np.asarray(g).dtype == np.asarray(args[k]).dtype, \
            f"gradient {k} has dtype {np.asarray(g).dtype}, not {np.asarray(args[k]).dtype}"


def _scalar_loss(op, n_args):
    """The plain Python function ``sum(sin(op(*args)))`` with ``n_args`` named parameters."""
    factory = _LOSS_FACTORIES[n_args]
    return factory(op)


def _loss1(op):
    def loss(a):
        return np.sum(np.sin(op(a)))
    return loss


def _loss2(op):
    def loss(a, b):
        return np.sum(np.sin(op(a, b)))
    return loss


def _loss3(op):
    def loss(a, b, c):
        return np.sum(np.sin(op(a, b, c)))
    return loss


def _loss4(op):
    def loss(a, b, c, d):
        return np.sum(np.sin(op(a, b, c, d)))
    return loss


_LOSS_FACTORIES = {1: _loss1, 2: _loss2, 3: _loss3, 4: _loss4}


@functools.lru_cache(maxsize=None)
def compiled(name, backend, scalar):
    """The compiled op (or its scalar loss) of the table entry ``name``, shared across tests."""
    entry = next(c for c in CASES + FIRST_ORDER_ONLY if c.name == name)
    fn = _scalar_loss(entry.fn, len(entry.gens)) if scalar else entry.fn
    return fn, adcompile.compile(fn, backend=backend)


# ----------------------------------------------------------------------------- checks
def check_gradient(entry, backend="python", dtype=np.float64, seed=0):
    """grad of the scalar loss vs a central difference along a random direction."""
    args = entry.args(dtype, seed)
    positions = _float_positions(args)
    plain, fn = compiled(entry.name, backend, True)
    grads = adcompile.grad(fn, wrt=positions)(*args)
    assert isinstance(grads, tuple) and len(grads) == len(positions)
    _check_grad_like(grads, args, positions)
    rng = np.random.default_rng(seed + 1)
    directions = [_random_like(args[k], rng) for k in positions]
    numeric = float(directional_difference(plain, _as_f64(args), dict(zip(positions, directions)), STEP64))
    analytic, scale = inner(grads, directions)
    rtol, atol = (RTOL64, ATOL64) if dtype is np.float64 else (RTOL32, ATOL32)
    assert_close_scaled(analytic, numeric, scale, rtol * entry.rtol, atol * entry.rtol, f"{entry.name} gradient")
    return grads


def check_transpose_identity(entry, backend="python", dtype=np.float64, seed=0):
    """<v, J u> (central difference of the plain op) == <J^T v, u> (adcompile.vjp)."""
    args = entry.args(dtype, seed)
    positions = _float_positions(args)
    plain, fn = compiled(entry.name, backend, False)
    out, pullback = adcompile.vjp(fn, *args)
    expected = entry.fn(*args)
    np.testing.assert_allclose(np.asarray(out, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                               rtol=1e-12 if dtype is np.float64 else 1e-5, atol=1e-12 if dtype is np.float64 else 1e-5,
                               err_msg=f"{entry.name}: compiled forward != plain Python")
    assert np.shape(out) == np.shape(expected)
    rng = np.random.default_rng(seed + 2)
    v = _random_like(np.asarray(expected) if np.ndim(expected) else 0.0, rng)
    if isinstance(v, np.ndarray):
        v = v.astype(np.asarray(out).dtype)
    elif dtype is np.float32:
        v = np.float32(v)
    cotangents = pullback(v)
    assert isinstance(cotangents, tuple) and len(cotangents) == len(args)  # one per primal
    assert all(cotangents[k] is None for k in range(len(args)) if k not in positions)
    cotangents = tuple(cotangents[k] for k in positions)
    _check_grad_like(cotangents, args, positions)
    u = [_random_like(args[k], rng) for k in positions]
    jvp = directional_difference(entry.fn, _as_f64(args), dict(zip(positions, u)), STEP64)
    rtol, atol = (RTOL64, ATOL64) if dtype is np.float64 else (RTOL32, ATOL32)
    assert_transpose_identity(v, jvp, cotangents, u, rtol * entry.rtol, atol * entry.rtol,
                              f"{entry.name} <v, J u> vs <J^T v, u>")


def check_forward(entry, dtype=np.float64, seed=0):
    """adcompile.jvp of the op (forward mode) vs a central difference of the plain op along the
    same random tangents, compared through a random cotangent ``v``: <v, J u>."""
    args = entry.args(dtype, seed)
    positions = _float_positions(args)
    _, fn = compiled(entry.name, "python", False)
    rng = np.random.default_rng(seed + 3)
    u = [_random_like(args[k], rng) for k in positions]
    tangents = [None] * len(args)
    for k, direction in zip(positions, u):
        tangents[k] = _as_dtype(direction, dtype) if isinstance(direction, np.ndarray) else \
            (np.float32(direction) if dtype is np.float32 else direction)
    out, tangent = adcompile.jvp(fn, tuple(args), tuple(tangents))
    assert np.shape(tangent) == np.shape(out), f"{entry.name}: tangent shape {np.shape(tangent)} != {np.shape(out)}"
    numeric = directional_difference(entry.fn, _as_f64(args), dict(zip(positions, u)), STEP64)
    v = _random_like(numeric if np.ndim(numeric) else 0.0, rng)
    rtol, atol = (RTOL64, ATOL64) if dtype is np.float64 else (RTOL32, ATOL32)
    assert_close_through(v, tangent, numeric, rtol * entry.rtol, atol * entry.rtol,
                         f"{entry.name} forward mode <v, J u>")


# --- issue 14: shifts, padding, signals, gathers and scatters ---
def increasing(n, low=-1.0, high=1.0):
    """Sorted distinct values (a grid for np.interp, np.searchsorted)."""
    return _gen(lambda rng, s: np.sort(rng.uniform(low, high, s)) + np.arange(s[0]) * 0.05, (n,))


@case(normal(6), f32=True, numba="slow")
def np_roll(x):
    return np.roll(x, 2) * np.roll(x, -1) + np.roll(x, 7)


@case(normal(3, 4), fixed(1))
def np_roll_axis(x, shift):
    return np.roll(x, shift, axis=1) + np.roll(x, -1, axis=0) * np.roll(x, shift)


@case(normal(5), normal(), f32=True)
def np_pad_constant(x, c):
    return np.pad(x, (2, 1), constant_values=c) * np.pad(x, (1, 2), mode="constant") + np.pad(x, 1)[3]


@case(normal(3, 4), normal())
def np_pad_per_axis(x, c):
    return np.pad(x, ((1, 0), (2, 3)), constant_values=c) + np.pad(x, ((0, 1), (3, 2)))


@case(normal(5), normal(3, 4), numba="slow")
def np_pad_edge_reflect(x, m):
    a = np.pad(x, (2, 3), mode="edge") * np.pad(x, (3, 2), mode="reflect")
    return np.sum(a) + np.pad(m, ((1, 2), (3, 1)), mode="reflect") * np.pad(m, ((2, 1), (2, 2)), mode="edge")


@case(normal(6), normal(3), f32=True, numba=True)
def np_convolve_full(a, v):
    return np.convolve(a, v) + np.convolve(v, a)


@case(normal(6), normal(3))
def np_convolve_modes(a, v):
    return np.convolve(a, v, mode="same") * np.convolve(v, a, "same") + np.sum(np.convolve(a, v, "valid"))


@case(normal(4), normal(7))
def np_convolve_short_signal(a, v):
    return np.sum(np.convolve(a, v, "valid")) + np.convolve(a, v, "same")


@case(normal(6), normal(3), f32=True)
def np_correlate_valid(a, v):
    return np.correlate(a, v) * np.correlate(a, v, "valid")


@case(normal(6), normal(3), numba="slow")
def np_correlate_modes(a, v):
    return np.correlate(a, v, "full")[1:7] + np.correlate(a, v, mode="same") + np.sum(np.correlate(v, a, "same"))


@case(normal(3), normal(5))
def np_correlate_short_signal(a, v):
    return np.correlate(a, v, "same") * np.sum(np.correlate(a, v, "full")) + np.sum(np.correlate(a, v, "valid"))


@case(off_grid(7), increasing(5, -3.0, 3.0), normal(5), f32=True, numba="slow")
def np_interp(x, xp, fp):
    return np.interp(x, xp, fp) + np.interp(x[0], xp, fp * fp)


@case(off_grid(6), increasing(5, -1.0, 1.0))
def np_searchsorted(x, grid):
    left = np.searchsorted(grid, x)
    right = np.searchsorted(grid, x, side="right")
    return x * left + x * x * right + np.searchsorted(grid, 0.1) * x


@case(unit(8), normal(8), f32=True)
def np_polyfit(x, y):
    return np.polyfit(x, y, 2)


@case(unit(10), normal(10), numba="slow")
def np_polyfit_cubic(x, y):
    return np.polyval(np.polyfit(x, y, 3), x) + np.polyfit(x, y * y, 1)[0] + np.polyfit(x, y, 0)


@case(normal(6), fixed(np.array([0, 5, 2, 2, -1])), f32=True, numba="slow")
def np_take(x, idx):
    return np.take(x, idx) * np.take(x, [1, 0, 1, 3, 3]) + x.take(idx) + np.take(x, 4)


@case(normal(3, 5), fixed(np.array([4, 0, 4, 1])), numba="slow")
def np_take_axis(m, idx):
    return np.take(m, idx, axis=1) + np.take(m, 2, axis=1)[:, None] * np.take(m, [2, 0], axis=0)[1, :4]


@case(normal(3, 5), fixed(np.array([[4, 0], [1, 1], [2, -1]])), f32=True, numba="slow")
def np_take_along_axis(m, idx):
    rows = np.take_along_axis(m, idx, axis=1)
    return rows * rows[:, :1] + np.take_along_axis(m, np.array([[2, 0, 1, 1, 0]]), axis=0)[0, 1:3]


@case(normal(7), fixed(np.array([6, 1, 0, 4, 0])))
def np_take_along_axis_1d(x, order):
    return np.take_along_axis(x, order, axis=0) * x[:5]


@case(normal(5), fixed(np.array([0, 2, 2, 4, 2])), normal(5), f32=True, numba=True)
def np_add_at(x, idx, v):
    y = np.zeros(5)
    np.add.at(y, idx, v * x[0])
    np.add.at(y, 1, x[3])
    z = x * 1.0
    np.add.at(z, idx, v)
    return y * x + z


@case(normal(4, 3), fixed(np.array([3, 0, 3])), normal(3, 3))
def np_add_at_rows(w, idx, v):
    g = w * w
    np.add.at(g, idx, v)
    np.add.at(g, idx, w[0])
    return g


@case(normal(4, 3), fixed(np.array([3, 0, 3])), normal(3, 3))
def index_add_assign_repeated(w, idx, v):
    # x[idx] += v keeps the last write of each repeated index (numpy), unlike np.add.at
    g = w * w
    g[idx] += v
    return g


@case(fixed(np.array([1, 4, 1, 1, 0])), normal(5), f32=True, numba="slow")
def np_bincount_weights(idx, w):
    return np.bincount(idx, weights=w) * np.bincount(idx, w * w, minlength=7)[:5]


@case(normal(5), fixed(np.array([3, 0, 3, 1])))
def np_bincount_counts(x, idx):
    counts = np.bincount(idx, minlength=5)
    return x * counts + x * x * np.bincount(idx)[0]


@case(normal(4, 4), f32=True, numba="slow")
def np_triu_indices(a):
    upper = a[np.triu_indices(4)]
    return upper * a[np.tril_indices(4)] + a[np.tril_indices(4, -1)][2] + np.sum(a[np.triu_indices(4, 1)]) + np.triu_indices(4)[1] * upper


@case(normal(3, 4), normal(4), f32=True, numba="slow")
def index_list(a, x):
    return a[[0, 2], :] * x[[0, 3, 3, 1]] + a[[1, 1]] + a[:2, [3, 0, 0, 2]] * x[[-1]]


@case(normal(7), f32=True, numba=True)
def index_mask_read(x):
    positive = x[x > 0.1]
    return np.sum(positive ** 2) * x + np.sum(x[x < 0.0]) * x[np.abs(x) < 10.0]


@case(normal(4, 3))
def index_mask_rows(a):
    return np.sum(a[a[:, 0] > 0.0] ** 2, axis=0) + np.sum(a[a > 0.0]) + np.mean(a[a < 0.5])


# --- issue 14: eigh, svd, qr, scans along axes, nan-reductions ---
# Decompositions are checked through sign-invariant quantities (the sign of each eigen/singular
# vector is LAPACK's choice), on a well-conditioned input and on a mildly ill-conditioned one
# (eigenvalues 0.1 apart, singular values 0.15 apart, condition numbers ~100).
def _orthogonal(rng, n):
    q, r = np.linalg.qr(rng.standard_normal((n, n)))
    return q * np.sign(np.diag(r))


def symmetric_with(*eigenvalues):
    """A symmetric matrix Q diag(eigenvalues) Q^T with a random orthogonal Q."""
    def make(rng):
        q = _orthogonal(rng, len(eigenvalues))
        return (q * np.array(eigenvalues)) @ q.T
    return make


def singular_values_of(m, n, *values):
    """An m x n matrix U diag(values) V^T with random orthonormal U, V."""
    def make(rng):
        k = len(values)
        return (_orthogonal(rng, m)[:, :k] * np.array(values)) @ _orthogonal(rng, n)[:, :k].T
    return make


@case(symmetric_with(-1.0, 0.5, 2.0, 3.5), f32=True)
def eigh_values_and_projector(a):
    w, v = np.linalg.eigh((a + a.T) / 2)
    return w[:, None] * (v * v) + np.linalg.eigvalsh((a + a.T) / 2)[None, :]


@case(symmetric_with(1.0, 1.1, 1.2, 5.0), normal(4))
def eigh_close_eigenvalues(a, x):
    w, v = np.linalg.eigh(0.5 * (a + a.T))
    return v @ np.diag(np.exp(w)) @ v.T @ x + np.sum(w * w)


@case(singular_values_of(4, 3, 3.0, 1.5, 0.5), f32=True)
def svd_tall(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return (u * u) @ s + np.sum(vt * vt * s[:, None], axis=0) @ s + u @ vt @ s


@case(singular_values_of(3, 5, 2.0, 1.0, 0.4))
def svd_wide(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return (u * u).T @ s + np.sum((vt * vt).T @ (s * s)) + np.sum(u @ vt, axis=1)


@case(singular_values_of(3, 3, 1.0, 0.85, 0.01))
def svd_ill_conditioned(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return u * u * s + (vt * vt).T + u @ vt


@case(singular_values_of(4, 3, 3.0, 1.0, 0.2), f32=True)
def svd_values_only(a):
    return np.linalg.svd(a, compute_uv=False) + np.sum(np.linalg.svd(a.T, compute_uv=False) ** 2)


@case(singular_values_of(4, 3, 3.0, 1.5, 0.5))
def qr_tall(a):
    q, r = np.linalg.qr(a)
    signs = np.sign(np.diag(r))
    return (q * signs) @ (r * signs[:, None]) @ q[0] + np.sum(q * q, axis=1) + np.sum(r * r, axis=0) @ q.T


@case(singular_values_of(3, 3, 1.0, 0.5, 0.01))
def qr_square_ill_conditioned(a):
    q, r = np.linalg.qr(a)
    signs = np.sign(np.diag(r))
    return (q * signs) + r * signs[:, None]


@case(singular_values_of(4, 3, 3.0, 1.5, 0.5), f32=True)
def matrix_norms_spectral(a):
    return np.linalg.norm(a, 2) * np.linalg.norm(a, ord=-2) + np.linalg.norm(a, "nuc") + np.linalg.norm(a, "fro")


@case(spread(4, 3))
def matrix_norms_absolute_sums(a):
    return (np.linalg.norm(a, 1) + np.linalg.norm(a, -1) * np.linalg.norm(a, np.inf) + np.linalg.norm(a, -np.inf)
            + np.linalg.norm(a, axis=0, ord=1)[1])


@case(normal(3, 4), f32=True)
def cumsum_axis(x):
    return np.cumsum(x, axis=1) * x.cumsum(axis=0) + np.cumsum(x, axis=-1)[:, -1:] + np.cumsum(x[0], axis=0)


@case(normal(2, 3, 4))
def cumsum_axis_3d(x):
    return np.cumsum(x, axis=1) + x.cumsum(axis=2) * np.cumsum(x, axis=0)


@case(away(3, 4), f32=True)
def cumprod_axis(x):
    return np.cumprod(x, axis=1) + x.cumprod(axis=0) * np.cumprod(x[1], axis=0) + np.cumprod(x)[:4]


@case(with_zeros(3, 4))
def cumprod_axis_with_zeros(x):
    """Exact zeros (one in row 0, two in row 1): the derivative is the loop's, right at zeros."""
    return np.cumprod(x, axis=1) + np.cumprod(x, axis=0)[:, ::-1]


@case(spread(3, 4), f32=True)
def sort_axis(x):
    return np.sort(x, axis=1) * np.sort(x, axis=0) + np.sort(x)[:, ::-1] + np.sort(x, axis=None)[:4]


@case(spread(2, 3, 4))
def sort_axis_3d_with_argsort(x):
    return np.sort(x, axis=1) * np.argsort(x, axis=2) + np.argsort(x, axis=0) * x


@case(spread(3, 5), f32=True)
def running_extrema(x):
    return (np.maximum.accumulate(x, axis=1) + np.minimum.accumulate(x) * np.maximum.accumulate(x[0])
            + np.minimum.accumulate(x, axis=-1))


@case(normal(3, 4), fixed(np.array([[True, False, True, True], [False, True, True, False],
                                      [True, True, False, True]])), f32=True)
def sum_and_mean_where(x, mask):
    return (np.sum(x, axis=1, where=mask) + np.mean(x * x, axis=1, where=mask) + x.sum(where=mask[0])
            + np.mean(x, where=mask) + x.mean(axis=0, where=mask, keepdims=True)[0, :3])


def with_nans(*shape):
    """Normal entries with NaNs at [0, 1] and [2, 2] (their derivative must be 0, not nan)."""
    def draw(rng, s):
        x = rng.standard_normal(s)
        x[0, 1] = x[2, 2] = np.nan
        return x
    return _gen(draw, shape)


@case(with_nans(3, 4), f32=True)
def nansum_nanmean(y):
    return (np.nansum(y, axis=1) * np.nanmean(y, axis=1) + np.nansum(y) + np.nanmean(y)
            + np.nanmean(y, axis=0, keepdims=True)[0, :3])


@case(symmetric_with(-1.0, 0.5, 2.0), singular_values_of(4, 3, 2.0, 1.0, 0.5), spread(3, 4), numba=True)
def mix_decompositions_and_scans(a, b, x):
    w, v = np.linalg.eigh(a + a.T)
    u, s, vt = np.linalg.svd(b, full_matrices=False)
    q, r = np.linalg.qr(b)
    d = (v * v) @ w + np.sum(u * u, axis=0) * s + np.sum(vt * vt, axis=0) * s + np.sum(q * q, axis=0) * np.diag(r * r)
    e = np.cumsum(x, axis=1) + np.cumprod(x, axis=0) + np.sort(x, axis=0) + np.maximum.accumulate(x, axis=1)
    return np.sum(e, axis=1, where=x[0] > -0.5) + d + np.nansum(x, axis=1) + np.nanmean(x)


# --- issue 14: linear solves, determinants, einsum, tensordot, kron, batched matmul ---
# Matrices with a chosen condition number: U diag(s) V^T with U, V random orthogonal and the
# singular values s spaced evenly in log from `largest` down to largest / cond. "well" is cond
# 10 (s from 1 to 0.1), "ill" is cond 1e3 (mildly ill-conditioned; s from 1000 to 1, so that the
# rounding errors, which grow with the condition number, are tested while the derivatives stay
# O(1) and the central differences' truncation error small).
def conditioned(n, cond, m=None, largest=None, symmetric=False, negative_det=False):
    m = n if m is None else m
    largest = largest if largest is not None else (1.0 if cond <= 10 else cond)

    def draw(rng, shape):
        u = np.linalg.qr(rng.standard_normal((m, m)))[0][:, :n]
        v = u if symmetric else np.linalg.qr(rng.standard_normal((n, n)))[0]
        s = np.logspace(0.0, -np.log10(cond), n) * largest
        a = (u * s) @ v.T
        if negative_det and np.linalg.det(a) > 0:
            a[0] = -a[0]
        return a
    return _gen(draw, (m, n))


def well(n, **kw):
    return conditioned(n, 10.0, **kw)


def ill(n, **kw):
    return conditioned(n, 1e3, **kw)


@case(well(4), normal(4), f32=True, numba="slow")
def linalg_solve_vector(a, b):
    return np.linalg.solve(a, b)


@case(well(3), normal(3, 2), f32=True)
def linalg_solve_matrix(a, b):
    return np.linalg.solve(a, b) + np.linalg.solve(a.T, b)


@case(ill(4), normal(4))
def linalg_solve_ill_conditioned(a, b):
    return np.linalg.solve(a, b)


@case(well(3), f32=True, numba="slow")
def linalg_inv(a):
    return np.linalg.inv(a)


@case(ill(3))
def linalg_inv_ill_conditioned(a):
    return np.linalg.inv(a)


@case(well(3), f32=True)
def linalg_det(a):
    return np.linalg.det(a) * a[0]


@case(ill(3))
def linalg_det_ill_conditioned(a):
    return np.linalg.det(a) * 1e-4


@case(well(3, negative_det=True), f32=True, numba="slow")
def linalg_slogdet(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * logdet + np.linalg.slogdet(a.T @ a)[1] * a[1]


@case(ill(3, negative_det=True))
def linalg_slogdet_ill_conditioned(a):
    sign, logdet = np.linalg.slogdet(a)
    return sign * logdet


# cholesky reads the lower triangle only (as numpy's): the random directions of the checks
# move the upper triangle too, whose derivative is zero.
@case(well(3, symmetric=True, largest=2.0), f32=True, numba=True)
def linalg_cholesky(a):
    return np.linalg.cholesky(a)


@case(ill(3, symmetric=True))
def linalg_cholesky_ill_conditioned(a):
    return np.linalg.cholesky(a) * np.linalg.cholesky(a @ a.T * 1e-6)[1, 1]


@case(well(3, m=6), normal(6), normal(6, 2), f32=True)
def linalg_lstsq(a, b, c):
    return np.linalg.lstsq(a, b, rcond=None)[0] + np.linalg.lstsq(a, c)[0][:, 1]


# the normal equations square the condition number (1e6 here); the refinement step recovers it
@case(ill(3, m=6), normal(6))
def linalg_lstsq_ill_conditioned(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b, rcond=None)
    return x


@case(normal(3, 4), normal(4, 2), normal(4), normal(4), f32=True, numba=True)
def einsum_products(m, n, v, w):
    a = np.einsum('ij,jk->ik', m, n) + np.einsum('ij,j->i', m, v)[:, None] + np.einsum('i,i->', v, w)
    return a + np.einsum('ij,ij->', m, m * v) + np.einsum('ij,jk', m, n)


@case(normal(3, 3), normal(3, 4))
def einsum_one_operand(q, m):
    return np.einsum('ij->ji', m) * np.einsum('ii->', q) + np.einsum('ij->', m) + np.einsum('ii->i', q)[0]


@case(normal(3), normal(4), normal(5, 3), normal(5, 4))
def einsum_outer_forms(v, w, x, y):
    return np.einsum('i,j->ij', v, w) + np.einsum('ij,kj->ik', x, x)[0, 1] + np.einsum('ni,nj->ij', x, y)


@case(normal(2, 3, 4), normal(2, 4, 5), normal(2, 4), normal(5, 2), f32=True)
def einsum_batched_and_chains(s, t, r, u):
    a = np.einsum('bij,bjk->bik', s, t) + np.einsum('bij,bj->bi', s, r)[:, :, None]
    return a + np.einsum('bij,bjk,kl->bil', s, t, u)[:, :, :1] + np.einsum('ijk,ikl->jl', s, t)


@case(normal(2, 3, 4), normal(3, 4, 2), normal(3, 4))
def tensordot_forms(s, t, m):
    return np.tensordot(s, t, axes=2)[0] + np.tensordot(m, s, axes=([0, 1], [1, 2])) + \
        np.tensordot(m, m.T, 1)[0, 0] + np.tensordot(s, t, axes=([2, 1], [1, 0]))[0]


@case(normal(3), normal(2), normal(2, 3), normal(2, 2), f32=True)
def kron_forms(v, w, a, b):
    return np.kron(v, w) + np.kron(a, b)[1]


@case(normal(2, 3, 4), normal(2, 4, 2), normal(4, 2), normal(3, 4), f32=True, numba=True)
def matmul_batched(s, t, m, p):
    return s @ t + np.matmul(s, m) + (p @ t)[:, :, :1] + s[:1] @ t


@case(normal(2, 3, 4), normal(4), normal(3), normal(2, 3, 3))
def matmul_batched_with_vectors(s, v, w, t):
    return s @ v + w @ t


# --- issue 14 leftovers: stacked linalg, einsum ellipses ---
# A stack of matrices is a loop over them, each taken by the 2-d rules (frontend/numpy/linalg/stacks.py).
def stack_of(count, make_matrix):
    """``count`` matrices drawn by the generator ``make_matrix``, stacked on a leading axis."""
    def make(rng):
        return np.stack([make_matrix(rng) for _ in range(count)])
    return make


@case(stack_of(2, well(3)), normal(2, 3, 2), f32=True, numba=True)
def linalg_solve_stacked(a, b):
    return np.linalg.solve(a, b) + np.linalg.solve(a[0], b)


@case(stack_of(3, well(3)), normal(3))
def linalg_solve_stacked_vector(a, b):
    return np.linalg.solve(a, b) * np.linalg.det(a)[:, None]


@case(stack_of(2, well(3, negative_det=True)), f32=True, numba="slow")
def linalg_inv_det_slogdet_stacked(a):
    sign, logdet = np.linalg.slogdet(a)
    return np.linalg.inv(a) + (sign * logdet)[:, None, None] + np.linalg.det(a[::-1])[:, None, None]


@case(lambda rng: stack_of(2, well(3, symmetric=True, largest=2.0))(rng).reshape(1, 2, 3, 3))
def linalg_cholesky_stacked_4d(a):
    return np.linalg.cholesky(a)


@case(stack_of(2, symmetric_with(-1.0, 0.5, 2.0, 3.5)), f32=True)
def eigh_stacked(a):
    s = 0.5 * (a + np.swapaxes(a, 1, 2))
    w, v = np.linalg.eigh(s)
    return w[:, :, None] * (v * v) + np.linalg.eigvalsh(s)[:, None, :]


@case(stack_of(2, singular_values_of(4, 3, 3.0, 1.5, 0.5)))
def svd_qr_stacked(a):
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    q, r = np.linalg.qr(a)
    signs = np.sign(r[:, [0, 1, 2], [0, 1, 2]])
    return ((u * u) @ s[0])[:, :, None] + np.linalg.svd(a, compute_uv=False)[:, None, :] + (q * signs[:, None, :]) @ (
        r * signs[:, :, None]) + np.sum(vt * vt, axis=1)[:, None, :]


@case(stack_of(2, singular_values_of(4, 3, 3.0, 1.5, 0.5)))
def matrix_norms_stacked(a):
    return (np.linalg.norm(a, 2, axis=(1, 2)) * np.linalg.norm(a, "nuc", axis=(-2, -1))
            + np.linalg.norm(a, "fro", axis=(-2, -1)) + np.linalg.norm(a, 1, axis=(-2, -1))
            + np.linalg.norm(a, -np.inf, axis=(1, 2)) * np.linalg.norm(a, -2, axis=(-2, -1)))


@case(normal(2, 3, 4), normal(2, 4, 2), normal(4, 2), normal(3, 4), f32=True, numba="slow")
def einsum_ellipses(s, t, m, x):
    return (np.einsum("...ij,...jk->...ik", s, t) + np.einsum("...ij,jk", s, m)
            + np.einsum("...j,...j->...", s, x)[:, :, None] + np.einsum("i...->...", s)[None, :, :2])


@case(normal(3, 2), normal(2, 2, 3))
def einsum_ellipses_implicit_and_broadcast(x, t):
    return np.einsum("i...", x)[:, :, None] * np.einsum("...", x)[0] + np.einsum("...ij,...ji", t, np.swapaxes(t, 1, 2)[:1])[0]


@case(normal(7), f32=True)
def order_statistics_without_nan(x):
    # the NaN check of median/quantile (a NaN line gives NaN) leaves the derivative to the
    # selected elements (tests/primitives/test_nonfinite.py checks the NaN itself)
    return np.median(x) * np.percentile(x, 30.0) + np.quantile(x.reshape(1, 7), [0.2, 0.9], axis=1)[:, 0]


# ----------------------------------------------------------------------------- tests
F32_CASES = [c for c in CASES if c.f32]
NUMBA_CASES = [c for c in CASES if c.numba]


def test_table_covers_the_issue():
    names = {c.name for c in CASES}
    assert len(names) == len(CASES), "duplicate table entry names"
    assert len(F32_CASES) >= 15 and len(NUMBA_CASES) >= 10


@pytest.mark.parametrize("entry", CASES, ids=repr)
def test_gradient_float64(entry):
    check_gradient(entry)


@pytest.mark.parametrize("entry", CASES, ids=repr)
def test_transpose_identity_float64(entry):
    check_transpose_identity(entry)


@pytest.mark.parametrize("entry", CASES, ids=repr)
def test_forward_float64(entry):
    check_forward(entry)


@pytest.mark.parametrize("entry", F32_CASES, ids=repr)
def test_forward_float32(entry):
    check_forward(entry, dtype=np.float32)


@pytest.mark.parametrize("entry", F32_CASES, ids=repr)
def test_gradient_float32(entry):
    check_gradient(entry, dtype=np.float32)


@pytest.mark.parametrize("entry", F32_CASES, ids=repr)
def test_transpose_identity_float32(entry):
    check_transpose_identity(entry, dtype=np.float32)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("entry", FIRST_ORDER_ONLY, ids=repr)
def test_first_order_only_entries(entry, dtype):
    check_gradient(entry, dtype=dtype)
    check_transpose_identity(entry, dtype=dtype)


@pytest.mark.parametrize("entry", [pytest.param(c, marks=[pytest.mark.slow] if c.numba == "slow" else [])
                                   for c in NUMBA_CASES], ids=repr)
def test_numba_gradient_equals_python_run(entry):
    """The numba-compiled gradient is right (``check_gradient``: against finite differences) and
    equals the plain-Python backend's numbers. (Both backends generate the same source, so
    comparing the sources would test nothing.)"""
    numba_grads = check_gradient(entry, backend="numba")
    python_grads = adcompile.grad(compiled(entry.name, "python", True)[1],
                                  wrt=_float_positions(entry.args()))(*entry.args())
    for a, b in zip(numba_grads, python_grads):
        np.testing.assert_allclose(a, b, rtol=RTOL_NUMBA, atol=ATOL_NUMBA)


NUMBA_VJP = ["matmul_2d_1d", "gather_1d_repeated"]


@pytest.mark.parametrize("name", NUMBA_VJP)
def test_numba_vjp(name):
    entry = next(c for c in CASES if c.name == name)
    check_transpose_identity(entry, backend="numba")


@pytest.mark.parametrize("name", ["logistic_loss", "gather_rows_repeated", "mix_piecewise"])
def test_numba_float32(name):
    entry = next(c for c in CASES if c.name == name)
    check_gradient(entry, backend="numba", dtype=np.float32)
