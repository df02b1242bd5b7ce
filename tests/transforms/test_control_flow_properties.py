"""Property tests: gradients through loops and branches stay right for random loop bounds,
data (so random branch outcomes) and break points. Python backend, few examples each."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import adcompile
from cf_helpers import check_against_python

SETTINGS = settings(max_examples=10, deadline=None)


def _vector(draw, n, low=-1.0, high=1.0):
    values = draw(st.lists(st.floats(low, high, allow_nan=False), min_size=n, max_size=n))
    x = np.array(values)
    return x


def _away_from(x, threshold, margin=0.05):
    """Nudge entries away from a branch threshold, where finite differences would straddle it."""
    x = x.copy()
    close = np.abs(x - threshold) < margin
    x[close] = threshold + margin * np.where(x[close] >= threshold, 2.0, -2.0)
    return x


def branchy_sum(x, lo, hi):
    s = 0.0
    for i in range(lo, hi):
        if x[i] > 0:
            s += np.sin(x[i]) * x[i]
        elif x[i] < -0.5:
            s -= x[i] * s
        else:
            s += 0.5 * x[i] * x[i]
    return s


def break_continue(x, stop):
    s = 0.0
    for i in range(x.shape[0]):
        if i >= stop:
            break
        if x[i] < 0:
            continue
        s = s * 0.9 + np.exp(x[i])
    return s


def strided(x, start, step):
    s = 1.0
    for i in range(start, x.shape[0], step):
        s = s * np.cos(x[i]) + x[i]
    return s


def early_exit_fill(x, limit):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i] * (i + 1.0)
        if np.sum(out) > limit:
            return np.sum(out * out)
    return np.sum(out)


def damped_steps(k, x0, n):
    x = x0
    v = 0.0
    for i in range(n):
        v = v - 0.1 * (k * x + 0.3 * v)
        x = x + 0.1 * v
    return x * x


@st.composite
def bounds_and_data(draw):
    n = draw(st.integers(1, 8))
    lo = draw(st.integers(0, n))
    hi = draw(st.integers(lo, n))
    x = _away_from(_away_from(_vector(draw, n), 0.0), -0.5)
    return x, lo, hi


@given(bounds_and_data())
@SETTINGS
def test_branches_over_random_bounds(case):
    x, lo, hi = case
    check_against_python(branchy_sum, (x, lo, hi))


@given(st.integers(1, 8).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n + 1))), st.data())
@SETTINGS
def test_break_and_continue_at_random_places(n_stop, data):
    n, stop = n_stop
    x = _away_from(_vector(data.draw, n), 0.0)
    check_against_python(break_continue, (x, stop))


@given(st.integers(1, 9), st.integers(0, 4), st.sampled_from([1, 2, 3, -1, -2]), st.data())
@SETTINGS
def test_random_strides(n, start, step, data):
    x = _vector(data.draw, n)
    start = min(start, n - 1)
    check_against_python(strided, (x, start, step))


@given(st.integers(1, 7), st.floats(0.2, 6.0), st.data())
@SETTINGS
def test_early_return_at_random_iteration(n, limit, data):
    x = _vector(data.draw, n, 0.05, 1.0)
    partial_sums = np.cumsum(x * np.arange(1.0, n + 1.0))
    while np.min(np.abs(partial_sums - limit)) < 0.05:  # keep away from the branch threshold
        limit += 0.07
    compiled = check_against_python(early_exit_fill, (x, limit), wrt=0)
    assert np.isfinite(adcompile.grad(compiled)(x, limit)).all()


@given(st.floats(0.5, 3.0), st.floats(-1.0, 1.0), st.integers(0, 60))
@SETTINGS
def test_simulation_with_random_length(k, x0, n):
    check_against_python(damped_steps, (k, x0, n))
