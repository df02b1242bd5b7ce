"""An ``if`` on a compile-time constant keeps only the branch it takes, in the forward and the
backward sweep (``passes/constant_conditions.py``): a layer's padding of 0 leaves no branch whose array
exists on one path only (numba could not type the gradient of a max-pooling layer)."""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences

BACKENDS = ["numba", "python"]


def pad(x, p):
    padded = np.zeros(x.shape[0] + 2 * p) - np.inf
    padded[p:p + x.shape[0]] = x
    return padded


def padded_when_asked(x):
    p = 0
    q = 0
    if p != 0 or q != 0:
        x = pad(x, p)
    return np.sum(np.maximum(x[1:], x[:-1]) ** 2)


def taken_branch(x):
    scale = 2.5
    on = True
    s = 0.0
    for i in range(3):
        if on and not scale < 1.0:
            s = s + np.sum(np.sin(x * scale)) * (i + 1)
        else:
            s = s - np.sum(x)
    return s


def runtime_condition_kept(x, c):
    limit = 0.5
    if c > limit:
        x = x * 3.0
    return np.sum(x ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("program, condition", [(padded_when_asked, "!= 0"), (taken_branch, "< 1.0")])
def test_a_constant_condition_leaves_one_branch(program, condition, backend):
    x = np.linspace(-0.7, 0.9, 6)
    compiled = adcompile.compile(program, backend=backend)
    assert np.isclose(compiled(x), program(x))
    gradient = adcompile.grad(compiled)
    np.testing.assert_allclose(gradient(x), gradient_by_differences(program, (x,)), rtol=1e-6, atol=1e-8)
    assert condition not in adcompile.source(gradient, x)
    assert condition not in adcompile.source(compiled, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_condition_known_only_at_run_time_stays(backend):
    x = np.linspace(-0.7, 0.9, 6)
    compiled = adcompile.compile(runtime_condition_kept, backend=backend)
    gradient = adcompile.grad(compiled)
    for c in (0.2, 0.8):
        numeric = gradient_by_differences(lambda z: runtime_condition_kept(z, c), (x,))
        np.testing.assert_allclose(gradient(x, c), numeric, rtol=1e-6, atol=1e-8)
    assert "c > limit" in adcompile.source(gradient, x, 0.2)
