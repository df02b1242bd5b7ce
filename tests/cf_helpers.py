"""Helper functions imported by the control-flow and call tests: calls into another module."""
import numpy as np

import adcompile

SCALE = 1.5


def softplus(x):
    return np.log(1.0 + np.exp(x))


def scaled_square(x, scale=SCALE):
    return scale * x * x


def affine_pair(x, a, b=0.25):
    """Returns a tuple."""
    return a * x + b, a * x - b


def clipped(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def weighted_sum(x, w):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * w[i]
    return s


def level2(x, k):
    return scaled_square(x, scale=k) + softplus(x)


def first_above(x, threshold):
    """Index of the first entry above ``threshold`` (len(x) if none)."""
    for i in range(len(x)):
        if x[i] > threshold:
            return i
    return len(x)


@adcompile.compile
def compiled_norm2(x):
    return np.sum(x * x)


def write_square(out, i, value):
    out[i] = value * value


# ---------------------------------------------------------------------- test harness
def _fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def check_against_python(fn, args, backend="python", wrt=None, check_args_unchanged=False):
    """Compile ``fn``; its value must equal running ``fn`` itself, and its gradient (of every
    float argument, or ``wrt``) must match central finite differences."""
    compiled = adcompile.compile(fn, backend=backend)
    expected = fn(*_fresh(args))
    got = compiled(*_fresh(args))
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    if check_args_unchanged:
        before = _fresh(args)
        adcompile.grad(compiled, wrt=wrt if wrt is not None else 0)(*args)
        for a, b in zip(args, before):
            np.testing.assert_array_equal(a, b)
    adcompile.gradcheck(compiled, _fresh(args), wrt=wrt)
    return compiled
