"""The compiled exponential (``adcompile/runtime/kernels/elementary_numba.py``) against the
exponential in extended precision, at its special values, and in every dtype it takes.

The accuracy bound is a property of its arithmetic: checked on a million arguments spread over
the whole range (overflow, the subnormal range, tiny arguments) where ``np.longdouble`` has
more precision than a double (x86's 80-bit format), and compared there with numpy's own
``np.exp``; the C library's exp is correctly rounded in all but about 0.1% of cases.
"""
import numba
import numpy as np
import pytest

import adcompile.runtime.numba_impls  # noqa: F401  (registers rt.exp's numba version)
from adcompile.runtime import helpers as rt
from adcompile.runtime.kernels.elementary_numba import _exp64

EXTENDED = np.finfo(np.longdouble).nmant >= 63


@numba.njit
def exp_in_a_loop(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = rt.exp(x[i])
    return out


@numba.njit
def exp_of_an_array(x):
    return rt.exp(x)


def arguments(count, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.uniform(-745.1, 709.7, count // 2), rng.standard_normal(count // 4) * 3.0,
                           rng.standard_normal(count // 8) * 1e-9, rng.uniform(-745.1, -708.0, count // 8)])


def ulp_errors(values, x):
    exact = np.exp(x.astype(np.longdouble))
    nearest = exact.astype(np.float64)
    unit = np.spacing(np.abs(nearest)).astype(np.longdouble)
    return (np.abs(values.astype(np.longdouble) - exact) / unit).astype(np.float64), nearest


@pytest.mark.skipif(not EXTENDED, reason="np.longdouble is no more precise than a double here")
@pytest.mark.parametrize("compiled", [exp_in_a_loop, exp_of_an_array], ids=["scalars in a loop", "array"])
def test_within_0_72_ulp_and_more_often_correctly_rounded_than_numpy(compiled):
    x = arguments(1_000_000)
    values = compiled(x)
    errors, nearest = ulp_errors(values, x)
    normal = nearest >= np.finfo(np.float64).tiny
    assert errors[normal].max() <= 0.72 and errors.max() <= 0.8, (errors[normal].max(), errors.max())
    correctly_rounded = np.mean(values == nearest)
    numpy_rounded = np.mean(np.exp(x) == nearest)
    assert correctly_rounded >= 0.98 and correctly_rounded > numpy_rounded, (correctly_rounded, numpy_rounded)


def test_special_values_are_numpys():
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 709.78, 709.79, 710.0, 1e308, -745.13, -745.14, -746.0,
                  -1e308, 1e-300, -1e-300, 5e-324])
    with np.errstate(over="ignore", under="ignore"):
        expected = np.exp(x)
    for compiled in (exp_in_a_loop, exp_of_an_array):
        values = compiled(x)
        assert np.array_equal(values, expected, equal_nan=True), (x, values, expected)


def test_the_subnormal_range_is_within_one_unit_of_numpy():
    x = np.linspace(-745.1, -708.0, 20_001)
    values, expected = exp_in_a_loop(x), np.exp(x)
    assert np.all(np.abs(values - expected) <= np.spacing(expected))


def test_float32_is_rounded_once_from_double():
    x = np.random.default_rng(1).uniform(-100.0, 80.0, 100_000).astype(np.float32)
    values = exp_of_an_array(x)
    assert values.dtype == np.float32
    expected = np.exp(x.astype(np.float64)).astype(np.float32)
    assert np.all(np.abs(values - expected) <= np.spacing(expected))
    scalar = numba.njit(lambda v: np.array([rt.exp(v)]))(np.float32(1.5))
    assert scalar.dtype == np.float32 and scalar[0] == np.float32(np.exp(1.5))


def test_integers_and_booleans_give_float64_and_complex_values_numbas_exp():
    scalar = numba.njit(lambda v: rt.exp(v))
    assert scalar(3) == np.exp(3.0) and scalar(True) == np.exp(1.0)
    ints = exp_of_an_array(np.arange(-5, 5))
    assert ints.dtype == np.float64 and np.allclose(ints, np.exp(np.arange(-5.0, 5.0)), rtol=1e-15)
    z = np.array([1.0 + 2.0j, -0.5j])
    np.testing.assert_allclose(exp_of_an_array(z), np.exp(z), rtol=1e-15)


def test_the_python_helper_is_numpys_exp():
    x = np.random.default_rng(2).uniform(-50.0, 50.0, 1000)
    assert np.array_equal(rt.exp(x), np.exp(x)) and rt.exp(0.5) == np.exp(0.5)


def test_the_kernel_inlines_into_a_loop_that_vectorises():
    """What the kernel is for: in a map loop it is inlined and vectorised, where np.exp is a call."""
    llvm = exp_in_a_loop.inspect_llvm(exp_in_a_loop.signatures[0])
    assert "x double>" in llvm and "@exp(" not in llvm.replace("declare", "")
    assert _exp64(1.0) == np.exp(1.0)
