"""Fused loops whose unfused fallback is left out of the code (``lowering/deferred_fallbacks.py``).

A function that writes into no argument raises ``UnfusedCodeNeeded`` where a fused loop's
run-time check fails, and the call reruns with the unfused code: the results must be those of
numpy (and central differences) on both sides of the check, on numba and on the Python backend
with the lowering on; a function writing into an argument keeps its fallback inline; an error
of the unfused code names the user's line.
"""
import numpy as np
import pytest

import adcompile
from adcompile.backend import loader
from adcompile.dask.kernel import build_kernel
from oracles import gradient_by_differences

RNG = np.random.default_rng(7)
LOWERED_FALLBACK = "raise rt.UnfusedCodeNeeded("


def row_broadcast(A, b):
    return np.sum(np.tanh(A - b) * A)


def scaled_sum(x, y):
    t = np.sin(x) * y + x
    return np.sum(np.exp(t) * t)


def _unfused_loaded(source_fragment):
    return any(source_fragment in key[0] and LOWERED_FALLBACK not in key[0] for key in loader._loaded)


@pytest.mark.parametrize("f, shapes", [(row_broadcast, ((4, 3), (3,))), (scaled_sum, ((6,), (6,)))],
                         ids=["row_broadcast", "scaled_sum"])
def test_a_check_that_fails_reruns_the_call_with_the_unfused_code(backend, f, shapes):
    args = [RNG.standard_normal(shape) for shape in shapes]
    gradient = adcompile.grad(adcompile.compile(f, backend=backend, tiered=False), wrt=(0, 1))
    source = gradient.source(*args, stage="lowered")
    assert LOWERED_FALLBACK in source and "rt.unbroadcast" not in source, source
    broadcast = [args[0], args[1][:1]]  # length 1 broadcast at run time: the fused loop's check fails
    for call_args in (args, broadcast, args):
        expected = [gradient_by_differences(f, call_args, k) for k in (0, 1)]
        got = gradient(*call_args)
        for g, e in zip(got, expected):
            assert g.shape == e.shape and np.allclose(g, e, rtol=1e-6, atol=1e-6)
        assert np.isclose(adcompile.compile(f, backend=backend)(*call_args), f(*call_args))


def test_the_unfused_code_is_loaded_only_when_a_call_needs_it(monkeypatch):
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")

    def only_here(A, b):
        return np.sum(np.cos(A * b) * A)

    gradient = adcompile.grad(adcompile.compile(only_here, backend="python"))
    A, b = RNG.standard_normal((3, 5)), RNG.standard_normal(5)
    gradient(A, b)
    assert not _unfused_loaded("def only_here_grad(")
    assert np.allclose(gradient(A, b[:1]), gradient_by_differences(only_here, (A, b[:1])), atol=1e-6)
    assert _unfused_loaded("def only_here_grad(")


def decay_in_place(w, g):
    w[:] = w - 0.1 * np.tanh(g) * w
    return np.sum(w * w)


def decay_a_view_in_place(w, g):
    head = w[1:]
    head[:] = head * np.exp(-g) + g
    return np.sum(w)


@pytest.mark.parametrize("f", [decay_in_place, decay_a_view_in_place])
def test_a_function_writing_into_its_argument_keeps_its_fallback_inline(backend, f):
    compiled = adcompile.compile(f, backend=backend, tiered=False)
    w, g = RNG.standard_normal(6), RNG.standard_normal(5 if f is decay_a_view_in_place else 6)
    assert LOWERED_FALLBACK not in compiled.source(w.copy(), g, stage="lowered")
    for g_now in (g, g[:1]):  # the second call's check fails: the inline unfused statements run
        w_compiled, w_numpy = w.copy(), w.copy()
        assert np.isclose(compiled(w_compiled, g_now), f(w_numpy, g_now))
        assert np.allclose(w_compiled, w_numpy)


def last_row_tanh(A):
    """Random program 44000271, shrunk: the backward half of its vjp pops the forward half's tape."""
    v1 = A * A.mean(axis=0, keepdims=True)
    for row in A:
        s = np.tanh(row)
    return v1 + s


def test_the_backward_half_of_a_vjp_popping_a_tape_it_was_given_keeps_its_fallback_inline(backend):
    """A run stopped midway would leave the tape short for the rerun ("pop from empty list")."""
    compiled = adcompile.compile(last_row_tanh, backend=backend, tiered=False)
    A, ct = RNG.standard_normal((3, 3)), RNG.standard_normal((3, 3))
    value, pullback = adcompile.vjp(compiled, A)
    np.testing.assert_allclose(value, last_row_tanh(A), rtol=1e-12)
    expected = sum(ct[i, j] * gradient_by_differences(lambda a: last_row_tanh(a)[i, j], (A,))
                   for i in range(3) for j in range(3))
    for _ in range(2):  # a pullback may be called again
        np.testing.assert_allclose(pullback(ct)[0], expected, rtol=1e-6, atol=1e-8)


def test_an_error_of_the_unfused_code_names_the_users_line(backend):
    gradient = adcompile.grad(adcompile.compile(scaled_sum, backend=backend, tiered=False))
    x = RNG.standard_normal(5)
    gradient(x, x)
    with pytest.raises(ValueError) as raised:
        gradient(x, RNG.standard_normal(3))  # shapes (5,) and (3,): numpy refuses them too
    message = str(raised.value)
    assert "test_deferred_fallbacks.py" in message and "t = np.sin(x) * y + x" in message, message


def test_a_dask_kernel_carries_the_unfused_code(monkeypatch):
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    gradient = adcompile.grad(adcompile.compile(row_broadcast, backend="python"))
    A, b = RNG.standard_normal((4, 3)), RNG.standard_normal(3)
    kernel = build_kernel(gradient, (A, b), "row_broadcast")
    assert kernel.unfused_source is not None and LOWERED_FALLBACK in kernel.source
    for call_b in (b, b[:1]):
        (got,) = kernel((A, call_b))
        assert np.allclose(got, gradient_by_differences(row_broadcast, (A, call_b)), atol=1e-6)


def column_updates(A, rounds):
    """Fused loops inside a ``while`` inside a ``for``: the jvp's loop assigns the tangent of
    ``np.log(...)`` only on the side of its check that passes."""
    W = A.copy()
    for i in range(3):
        count = 0
        while count < rounds:
            count += 1
            W[:, 0] += np.tanh(np.log(1.0 + A[:, 0] ** 2) * W[:, 1])
    return 2.0 * np.sum(W)


@pytest.mark.parametrize("rounds", [0, 2])
def test_a_deferred_fallback_ends_its_branch_for_numba_in_nested_loops(rounds):
    """``raise rt.UnfusedCodeNeeded(...)`` is a statement: a call that raised instead left numba
    a variable undefined on one side of the check, and the jvp could not be typed."""
    A = RNG.standard_normal((3, 2))
    compiled = adcompile.compile(column_updates, tiered=False)
    tangent = RNG.standard_normal((3, 2))
    value, derivative = adcompile.jvp(compiled, (A, rounds), (tangent, None))
    assert value == pytest.approx(column_updates(A, rounds), rel=1e-12)
    expected = np.sum(gradient_by_differences(column_updates, (A, rounds), 0) * tangent)
    assert derivative == pytest.approx(expected, rel=1e-6, abs=1e-8)
