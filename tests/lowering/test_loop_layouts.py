"""Arrays carried around loops keep one numba layout (``adcompile/lowering/loop_layouts.py``).

numba fails to compile ("Don't know how to allocate array with layout 'A'") code where an array
enters a loop with one layout and is rebound in it to another; the lowering makes such arrays
enter as ``rt.any_layout(v)``. The programs below failed before, on the default backend (numba);
each is compared with numpy's value and with central differences. The analysis's claims about
numba's layouts are checked against numba itself.
"""
import numba
import numpy as np
import pytest

import adcompile
from adcompile.ir.primitives import PRIMITIVES, Kind
from adcompile.runtime import helpers as rt
from adcompile.runtime import numba_impls  # noqa: F401  (the overloads of rt's helpers)
from oracles import gradient_by_differences


def transposed_state(x, W):
    """An RNN-like recursion whose state starts as a transpose ('F') and becomes a product ('C')."""
    h = x.T
    for _ in range(3):
        h = np.tanh(h) @ W
    return np.sum(h ** 2)


def transposed_in_the_loop(x):
    """A 'C' array that the loop transposes: 'F' in the first round of numba's typing."""
    h = np.zeros((3, 3)) + x
    for _ in range(3):
        h = np.sin(h.T * 2.0)
    return np.sum(h * h)


def shrinking_transpose(x):
    """A transposed view rebound to a slice of itself (random program 41000167, shrunk)."""
    t = np.transpose(np.tanh(np.full((2, 3), 0.5) * x[0]))
    s = 0.0
    for _ in range(2):
        s = s + np.sum(t * t)
        t = t[1:, :]
    return s


def updated_argument(w, c, n):
    """An argument updated in a loop: 'F' when the caller passes a transpose."""
    for _ in range(n):
        w = w - 0.1 * np.tanh(w - c)
    return np.sum(w * w)


def reversed_carry(A):
    B = A.T
    for _ in range(3):
        B = B[::-1] * 0.5 + np.sin(B)
    return np.sum(B * B)


def transposing_while(A):
    k = 0
    S = A
    while k < 3:
        S = np.cos(S.T) + 0.1 * S
        k += 1
    return np.sum(S ** 2)


def nested_carry(A):
    S = A.T
    s = 0.0
    for _ in range(2):
        for _ in range(2):
            S = np.tanh(S) * 0.9
            s = s + np.sum(S)
        S = S.T + 1.0
    return s


def written_and_transposed(A):
    S = A.T.copy()
    for _ in range(3):
        S[0] = S[1] * 2.0
        S = np.tanh(S.T)
    return np.sum(S ** 2)


def assert_value_and_gradient(fn, args, k=0):
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    np.testing.assert_allclose(adcompile.compile(fn)(*copies), fn(*args), rtol=1e-12)
    expected = gradient_by_differences(fn, args, k)
    np.testing.assert_allclose(adcompile.grad(fn, argnums=k)(*args), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn, args", [
    (transposed_state, (np.linspace(-0.5, 0.5, 9).reshape(3, 3), np.eye(3) * 0.4 + 0.1)),
    (transposed_in_the_loop, (np.linspace(-0.5, 0.5, 9).reshape(3, 3),)),
    (shrinking_transpose, (np.array([0.3, -0.2, 0.5]),)),
    (updated_argument, (np.asfortranarray(np.linspace(-1, 1, 12).reshape(3, 4)), np.ones((3, 4)) * 0.2, 3)),
    (updated_argument, (np.linspace(-1, 1, 12).reshape(4, 3).T, np.ones((3, 4)) * 0.2, 3)),
    (updated_argument, (np.linspace(-1, 1, 12).reshape(3, 4), np.ones((3, 4)) * 0.2, 0)),
    (reversed_carry, (np.linspace(-0.5, 0.5, 9).reshape(3, 3),)),
    (transposing_while, (np.asfortranarray(np.linspace(-0.5, 0.5, 9).reshape(3, 3)),)),
    (nested_carry, (np.linspace(-0.5, 0.5, 9).reshape(3, 3),)),
    (written_and_transposed, (np.linspace(-0.5, 0.5, 9).reshape(3, 3),)),
], ids=["transposed-state", "transposed-in-loop", "shrinking-transpose", "fortran-argument",
        "transposed-argument", "zero-trip", "reversed-carry", "transposing-while", "nested-loops",
        "written-and-transposed"])
def test_loop_carried_layouts_compile_and_differentiate_on_numba(fn, args):
    assert_value_and_gradient(fn, args)


def test_c_ordered_arguments_keep_a_c_ordered_loop_state():
    """The common case costs nothing: with 'C' arguments, ``w`` stays 'C' in the compiled loop
    (the conversion is numba's identity), and the lowered source says why it is there."""
    w, c = np.linspace(-1, 1, 12).reshape(3, 4), np.ones((3, 4))
    source = adcompile.source(adcompile.compile(updated_argument), w, c, 2, stage="lowered")
    assert "rt.c_ordered_marker((w, c))" in source and "rt.any_layout(w, args_c_ordered)" in source

    @numba.njit
    def convert(x, other):
        return rt.any_layout(x, rt.c_ordered_marker((x, other)))

    convert(w, c)
    assert convert.nopython_signatures[-1].return_type.layout == "C"
    convert(w, np.asfortranarray(c))
    assert convert.nopython_signatures[-1].return_type.layout == "A"
    convert(np.asfortranarray(w), c)
    assert convert.nopython_signatures[-1].return_type.layout == "A"


def test_any_layout_without_a_marker_is_an_a_view_of_the_same_memory():
    @numba.njit
    def convert(x):
        return rt.any_layout(x)

    x = np.ones((2, 3))
    view = convert(x)
    assert convert.nopython_signatures[-1].return_type.layout == "A"
    view[0, 0] = 5.0
    assert x[0, 0] == 5.0


# Each primitive the analysis takes to give a 'C' array, as user code writes it, with 'F' operands.
C_RESULT_EXPRESSIONS = {
    "zeros": lambda a: np.zeros((2, 3)), "ones": lambda a: np.ones((2, 3)), "empty": lambda a: np.empty((2, 3)),
    "full": lambda a: np.full((2, 3), a[0, 0]), "arange": lambda a: np.arange(3.0),
    "linspace": lambda a: np.linspace(0.0, 1.0, 3), "eye": lambda a: np.eye(3), "matmul": lambda a: a @ a.T,
    "outer": lambda a: np.outer(a[:, 0], a[0]), "copy": lambda a: a.copy(),
    "stop_gradient": lambda a: adcompile.stop_gradient(a), "cumsum": lambda a: np.cumsum(a),
    "ravel": lambda a: np.ravel(a), "vector": lambda a: np.array([a[0, 0], a[1, 2], 2.0]),
    "placeholder": lambda a: np.empty((2, 3)),  # reverse mode's np.empty((0, ...)), as "empty"
    "unbroadcast": None,  # emitted by derivative rules only: its runtime helper is checked below
}


C_RESULTS = sorted(name for name, spec in PRIMITIVES.items() if Kind.C_ORDERED_RESULT in spec.kinds)


@pytest.mark.parametrize("prim", C_RESULTS)
def test_the_primitives_declared_to_give_c_arrays_do_on_numba(prim):
    assert set(C_RESULT_EXPRESSIONS) == set(C_RESULTS)
    a = np.asfortranarray(np.linspace(0.1, 1.2, 12).reshape(3, 4))
    if C_RESULT_EXPRESSIONS[prim] is None:
        assert prim == "unbroadcast"
        helper = numba.njit(lambda g, x: rt.unbroadcast(g, x))
        for g, x in ((a, a), (a, a[0]), (a[:, ::-1], a), (a.T, np.ones(3))):
            helper(g, x)
            assert helper.nopython_signatures[-1].return_type.layout == "C", (g.shape, x.shape)
        return
    compiled = adcompile.compile(C_RESULT_EXPRESSIONS[prim])
    source = adcompile.source(compiled, a, stage="lowered")
    assert "return " in source
    compiled(a)
    compiled.tier(a, wait=True)  # numba's code for an 'F' argument
    code = compiled.specialization(compiled.signature((a,)))[2]
    dispatcher = getattr(code, "machine_code", None) or getattr(code, "dispatcher", code)
    assert dispatcher.nopython_signatures[-1].return_type.layout == "C", source


@pytest.mark.parametrize("prim", sorted(name for name, spec in PRIMITIVES.items() if Kind.LAYOUT_LIKE_FIRST in spec.kinds))
def test_the_primitives_declared_to_make_arrays_like_their_first_do_on_numba(prim):
    make = {"zeros_like": numba.njit(lambda a: np.zeros_like(a)), "ones_like": numba.njit(lambda a: np.ones_like(a))}[prim]
    a = np.linspace(0.1, 1.2, 12).reshape(3, 4)
    for operand, layout in ((a, "C"), (np.asfortranarray(a), "F"), (a[:, ::-1], "C"), (a[::2], "C")):
        make(operand)
        assert make.nopython_signatures[-1].return_type.layout == layout, (prim, operand.flags)
