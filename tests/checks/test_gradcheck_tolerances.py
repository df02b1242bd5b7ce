"""gradcheck and gradgradcheck use the tolerances they are given, and reject what is off by more.

Gradients deliberately wrong by a known relative amount (custom Functions whose backward
scales the true gradient) must be rejected at a tighter rtol and accepted at a looser one.
Central differences at the default steps agree with the true derivative of these smooth
functions to about 1e-9 relative in float64 and 1e-4 in float32, far inside every tolerance
used here, so the outcome is decided by the deliberate error alone.
"""
import numpy as np
import pytest

import adcompile
from adcompile import Function
from adcompile.checks.gradcheck import GradcheckError

X = np.array([0.3, -0.8, 1.4, 0.6])


class OffByOnePercent(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x) * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (np.cos(x) * x + np.sin(x)) * 1.01


class OffByFivePercent(OffByOnePercent):
    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (np.cos(x) * x + np.sin(x)) * 1.05


class OffBy5e5(OffByOnePercent):
    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * (np.cos(x) * x + np.sin(x)) * 1.00005


def summed(fn):
    def loss(x):
        return np.sum(fn.apply(x))
    return adcompile.compile(loss, backend="python")


def test_a_backward_off_by_one_percent_is_rejected_at_rtol_1e3_and_accepted_at_5e2():
    with pytest.raises(GradcheckError, match="OffByOnePercent: gradient of input 'x'"):
        adcompile.gradcheck(OffByOnePercent.apply, (X,), rtol=1e-3)
    assert adcompile.gradcheck(OffByOnePercent.apply, (X,), rtol=0.05)
    with pytest.raises(GradcheckError):  # the default float64 rtol is 1e-5
        adcompile.gradcheck(OffByOnePercent.apply, (X,))


def test_a_function_using_it_is_rejected_and_accepted_at_the_same_tolerances():
    loss = summed(OffByOnePercent)
    with pytest.raises(GradcheckError, match="argument 'x'"):
        adcompile.gradcheck(loss, (X,), rtol=1e-3)
    assert adcompile.gradcheck(loss, (X,), rtol=0.05)


def test_the_given_tolerance_is_not_multiplied():
    """Off by 5e-5: within 10 x the default rtol 1e-5, which the check used to allow."""
    loss = summed(OffBy5e5)
    with pytest.raises(GradcheckError):
        adcompile.gradcheck(loss, (X,))
    with pytest.raises(GradcheckError):
        adcompile.gradcheck(OffBy5e5.apply, (X,))
    assert adcompile.gradcheck(loss, (X,), rtol=1e-4)


def test_rtol_zero_is_used_not_replaced_by_the_default():
    exact = summed(Sine)
    assert adcompile.gradcheck(exact, (X,))  # the default rtol 1e-5 allows the differences' error
    with pytest.raises(GradcheckError, match="rtol=0"):
        adcompile.gradcheck(exact, (X,), rtol=0, atol=1e-15)
    assert adcompile.gradcheck(exact, (X,), rtol=0, atol=1e-7)


class Sine(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return grad_output * np.cos(x)


def test_a_large_float32_input_is_checked_at_the_float32_default_rtol():
    """Over 64 elements a sample of elements is checked, at rtol 2e-2 (not 0.2)."""
    x = np.linspace(-1.0, 1.5, 200).astype(np.float32)
    with pytest.raises(GradcheckError):
        adcompile.gradcheck(summed(OffByFivePercent), (x,))
    assert adcompile.gradcheck(summed(OffByOnePercent), (x,))
    assert adcompile.gradcheck(summed(Sine), (x,))


def test_gradgradcheck_uses_its_tolerances():
    @adcompile.compile(backend="python")
    def cubes(x):
        return np.sum(x ** 3)

    assert adcompile.gradgradcheck(cubes, (X,))
    with pytest.raises(GradcheckError, match="rtol=0"):  # differences of the gradient are not exact
        adcompile.gradgradcheck(cubes, (X,), eps=1e-3, rtol=0, atol=0)
