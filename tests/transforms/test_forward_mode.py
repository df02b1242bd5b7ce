"""Forward mode (jvp) and Jacobians, checked against finite differences."""
import numpy as np
import pytest

import adcompile
from oracles import directional_difference

RNG = np.random.default_rng(7)


def mlp(W1, b1, W2, x):
    h = np.tanh(W1 @ x + b1)
    return W2 @ h


def loop_filter(x, a):
    y = np.zeros_like(x)
    acc = 0.0
    for i in range(x.shape[0]):
        acc = a * acc + (1 - a) * x[i]
        y[i] = acc * acc
    return y


def while_halving(x):
    s = x * 1.0
    n = 0
    while np.sum(s * s) > 0.01:
        s = 0.5 * np.sin(s)
        n += 1
    return s


def branches(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        if x[i] > 0:
            out[i] = np.sqrt(x[i])
        else:
            out[i] = x[i] ** 3
    return out


def two_outputs(x, y):
    return np.sum(x * y), x * np.exp(y)


CASES = [
    (mlp, lambda: (RNG.standard_normal((4, 3)), RNG.standard_normal(4), RNG.standard_normal((2, 4)),
                   RNG.standard_normal(3))),
    (loop_filter, lambda: (RNG.standard_normal(6), 0.7)),
    (while_halving, lambda: (RNG.standard_normal(3),)),
    (branches, lambda: (RNG.standard_normal(5) + 0.05,)),
]


@pytest.mark.parametrize("fn, make_args", CASES, ids=[c[0].__name__ for c in CASES])
@pytest.mark.parametrize("backend", ["python", "numba"])
def test_jvp_matches_finite_differences(fn, make_args, backend):
    f = adcompile.compile(fn, backend=backend)
    args = make_args()
    for k, x in enumerate(args):
        tangents = [None] * len(args)
        tangents[k] = RNG.standard_normal(np.shape(x)) if np.ndim(x) else 1.0
        out, tangent_out = adcompile.jvp(f, args, tangents)
        np.testing.assert_allclose(out, fn(*args), rtol=1e-12, atol=1e-12)
        numeric = directional_difference(fn, args, {k: tangents[k]})
        np.testing.assert_allclose(tangent_out, numeric, rtol=1e-5, atol=1e-7)


def test_jvp_with_all_tangents_is_the_sum_of_partial_jvps():
    f = adcompile.compile(mlp, backend="python")
    args = CASES[0][1]()
    tangents = [RNG.standard_normal(np.shape(a)) for a in args]
    _, total = adcompile.jvp(f, args, tangents)
    parts = 0
    for k in range(len(args)):
        only = [None] * len(args)
        only[k] = tangents[k]
        parts = parts + adcompile.jvp(f, args, only)[1]
    np.testing.assert_allclose(total, parts, rtol=1e-10, atol=1e-12)


def test_jvp_of_tuple_outputs():
    f = adcompile.compile(two_outputs, backend="python")
    x, y = RNG.standard_normal(3), RNG.standard_normal(3)
    dx = RNG.standard_normal(3)
    (s, z), (ds, dz) = adcompile.jvp(f, (x, y), (dx, None))
    eps = 1e-6
    (s1, z1), (s0, z0) = two_outputs(x + eps * dx, y), two_outputs(x - eps * dx, y)
    np.testing.assert_allclose(ds, (s1 - s0) / (2 * eps), rtol=1e-6)
    np.testing.assert_allclose(dz, (z1 - z0) / (2 * eps), rtol=1e-6)


@pytest.mark.parametrize("fn, make_args", CASES, ids=[c[0].__name__ for c in CASES])
def test_jacobian_forward_equals_reverse_and_finite_differences(fn, make_args):
    f = adcompile.compile(fn, backend="python")
    args = make_args()
    k = len(args) - 1 if fn is mlp else 0
    jac_rev = adcompile.jacobian(f, wrt=k, mode="rev")(*args)
    jac_fwd = adcompile.jacobian(f, wrt=k, mode="fwd")(*args)
    np.testing.assert_allclose(jac_fwd, jac_rev, rtol=1e-10, atol=1e-12)
    x = args[k]
    out_shape = np.shape(fn(*args))
    assert jac_rev.shape == out_shape + np.shape(x)
    flat = jac_rev.reshape(int(np.prod(out_shape)), -1)
    for j in range(np.size(x)):
        e = np.zeros(np.size(x))
        e[j] = 1.0
        column = directional_difference(fn, args, {k: e.reshape(np.shape(x)) if np.ndim(x) else 1.0})
        np.testing.assert_allclose(flat[:, j], np.ravel(column), rtol=1e-5, atol=1e-7)


def test_jvp_rejects_tangent_of_wrong_shape():
    f = adcompile.compile(mlp, backend="python")
    args = CASES[0][1]()
    with pytest.raises(adcompile.AdCompileError, match="shape"):
        adcompile.jvp(f, args, (None, None, None, np.ones(5)))
