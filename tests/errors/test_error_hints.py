"""Errors about unsupported code say what to write instead, at the user's line."""
import numpy as np
import pytest

import adcompile


def draws_noise(x):
    return np.sum(x * np.random.normal(size=x.shape))


def prints(x):
    print(x)
    return np.sum(x)


def builds_a_dict(x):
    d = {1: x}
    return np.sum(d[1])


def comprehends(x):
    return np.sum(np.array([v * 2 for v in x]))


@pytest.mark.parametrize("program, line, hint", [
    (draws_noise, "np.random.normal(size=x.shape)", "pass them in as an argument"),
    (prints, "print(x)", "return the value to look at it"),
    (builds_a_dict, 'd = {1: x}', "constant string keys"),
    (comprehends, "[v * 2 for v in x]", "fill a preallocated array in a for loop"),
])
def test_unsupported_code_gets_a_hint_at_its_line(program, line, hint):
    with pytest.raises(adcompile.AdCompileError) as raised:
        adcompile.compile(program, backend="python")(np.ones(3))
    message = str(raised.value)
    assert hint in message and line in message and __file__ in message


def test_a_list_argument_is_told_to_become_an_array():
    with pytest.raises(adcompile.AdCompileError, match=r"pass np\.asarray\(\.\.\.\) of it"):
        adcompile.compile(total, backend="python")([1.0, 2.0])


def total(x):
    return np.sum(x)


def calls_backward(w, X):
    loss = np.sum((X @ w) ** 2)
    loss.backward()
    return loss


@pytest.mark.parametrize("backend", ["numba", "python"])
def test_backward_inside_a_compiled_function_points_to_adcompile_backward(backend):
    with pytest.raises(adcompile.AdCompileError) as raised:
        adcompile.compile(calls_backward, backend=backend)(np.ones(3), np.ones((4, 3)))
    message = str(raised.value)
    assert "loss.backward()" in message and __file__ in message
    assert "adcompile.backward(loss_fn, model, *args)" in message and "adcompile.grad(loss_fn)" in message
