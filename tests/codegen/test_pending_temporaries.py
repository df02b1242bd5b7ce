"""The code generator folds a temporary read once into the expression that reads it
(``codegen/python.py``: pending temporaries). Folding moves a computation to its reader, so it
is legal only while nothing it reads changes in between: a pending expression that reads a
variable is written out before any statement assigns that variable or writes into its memory,
and a pending temporary is written out before a statement writes into it. Each case is a
program whose generated code broke one of these, checked on the Python backend, with the
lowering (``ADCOMPILE_FUSE=all``) and on numba, against finite differences. (A pending allocation written into before it is written out,
random program 46008422, is a case of ``tests/properties/test_random_regressions.py``.)"""
import numpy as np
import pytest

import adcompile


def mean_of_cosines_in_a_loop(y, x, a):
    """Lowered random program 49003558: the backward half of the vjp restores ``_t_2`` (the
    mean, saved once per iteration) from its tape; the restore, a temporary read once (by the
    ``cos`` before it, in the next iteration), was pending itself, and written out before the
    pending ``ba * cos(_t_2)`` that reads the value it replaces."""
    v2 = np.concatenate((y, x))
    for i in range(3):
        a = a + np.sin(np.mean(np.cos(v2)))
    return a


Y = np.array([-0.0735, -0.1721, -0.7429, 0.1488])
X = np.array([0.067, 0.6035, 0.5225, 0.6748])


def central_differences(f, args, k, step=1e-6):
    grad = np.zeros_like(args[k])
    for i in range(args[k].size):
        plus, minus = [np.array(a, dtype=float) for a in args], [np.array(a, dtype=float) for a in args]
        plus[k].flat[i] += step
        minus[k].flat[i] -= step
        grad.flat[i] = (f(*plus) - f(*minus)) / (2 * step)
    return grad


def compiled(f, mode, monkeypatch):
    if mode == "lowered":
        monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    return adcompile.compile(f, backend="numba" if mode == "numba" else "python")


@pytest.mark.parametrize("mode", ["python", "lowered", "numba"])
def test_a_restore_waits_for_the_pending_reads_of_the_value_it_replaces(mode, monkeypatch):
    f = compiled(mean_of_cosines_in_a_loop, mode, monkeypatch)
    args = (Y, X, -0.0935)
    value, pullback = adcompile.vjp(f, *args)
    by, bx, ba = pullback(1.0)
    np.testing.assert_allclose(value, mean_of_cosines_in_a_loop(*args), rtol=1e-12)
    np.testing.assert_allclose(by, central_differences(mean_of_cosines_in_a_loop, args, 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(bx, central_differences(mean_of_cosines_in_a_loop, args, 1), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ba, 1.0, rtol=1e-12)
