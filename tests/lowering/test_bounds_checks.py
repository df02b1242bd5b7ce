"""Bounds checks only where the program indexes (``adcompile/lowering/bounds_checks.py``).

Code whose IR before the lowering indexes no array by integers compiles without numba's bounds
checks: the lowering's own indices are in range by construction. These tests check the
decision (in the generated header and in numba's options), that every index a user wrote, or a
transform derived from one, is still checked, and fuzz the invariant itself: random array
programs (slices with offsets known only at run time, reversed and strided views, 2-d views,
axis reductions, lengths that change in a loop) lowered as for numba and run as Python, where
numpy raises ``IndexError`` for any index past an array's end and the oracles catch one that
wraps below zero; and a sample on numba itself with the checks forced on.
"""
import numpy as np
import pytest

import adcompile
from adcompile.api import specialised
from adcompile.lowering.bounds_checks import needs_bounds_checks
from oracles import gradient_by_differences
from randprog.loading import load_module, unload_module

UNCHECKED = "compiled without bounds checks (every index in range by construction)"


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def mlp_loss(W1, W2, X, y):
    h = np.tanh(X @ W1)
    return np.mean((h @ W2 - y) ** 2)


def window(x, a, b):
    return np.sum(np.sin(x[a:b]) * x[a:b][::-1])


def looped(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sin(x[i]) * x[i]
    return total


def picked(x, k):
    return x[k] ** 2 + np.sum(x)


def scattered(x, idx):
    out = np.zeros(3)
    np.add.at(out, idx, x)
    return np.sum(out ** 2)


def machine_code(derived, *args):
    """The numba dispatcher ``derived`` compiled for ``args`` (called once)."""
    derived(*args)
    return derived._specs[derived._last_signature][2]


def header(derived, *args):
    return derived.source(*args, stage="lowered").splitlines()[0]


RNG = np.random.default_rng(0)
X8 = RNG.uniform(-1.0, 1.0, 8)
W1, W2, XS, YS = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((6, 3)), RNG.standard_normal(6)


@pytest.mark.parametrize("f, args", [(rosenbrock, (X8,)), (mlp_loss, (W1, W2, XS, YS)), (window, (X8, 2, 20)),
                                     (window, (X8, -5, 7))], ids=["rosenbrock", "mlp", "window", "window_negative"])
def test_array_code_compiles_without_checks_and_its_gradient_is_right(f, args):
    gradient = adcompile.grad(adcompile.compile(f))
    assert not needs_bounds_checks(gradient.ir(gradient.signature(args)))
    assert machine_code(gradient, *args).targetoptions["boundscheck"] is False
    assert header(gradient, *args).endswith(UNCHECKED + ".")
    expected = gradient_by_differences(lambda v: f(v, *args[1:]), (args[0],))
    np.testing.assert_allclose(gradient(*args), expected, rtol=1e-6, atol=1e-7)


def test_the_option_still_turns_every_check_off():
    gradient = adcompile.grad(adcompile.compile(looped, boundscheck=False))
    assert machine_code(gradient, X8).targetoptions["boundscheck"] is False
    assert header(gradient, X8).endswith("compiled without bounds checks (boundscheck=False).")


def test_user_indices_keep_their_checks():
    gradient = adcompile.grad(adcompile.compile(looped))
    assert machine_code(gradient, X8).targetoptions["boundscheck"] is True
    assert "bounds checks" not in header(gradient, X8)
    np.testing.assert_allclose(gradient(X8), np.sin(X8) + X8 * np.cos(X8), rtol=1e-12)


@pytest.mark.parametrize("k", [8, -9, 100])
def test_an_index_out_of_range_in_array_code_still_raises(k):
    f = adcompile.compile(picked)
    with pytest.raises(IndexError):
        f(X8, k)
    with pytest.raises(IndexError):
        adcompile.grad(f)(X8, k)


def test_an_add_at_out_of_range_raises():
    f = adcompile.compile(scattered)
    assert f(np.ones(2), np.array([0, 2])) == pytest.approx(2.0)
    with pytest.raises(IndexError):
        f(np.ones(2), np.array([0, 3]))
    with pytest.raises(IndexError):
        adcompile.grad(f)(np.ones(2), np.array([0, 3]))


# ------------------------------------------------------------------ the invariant, fuzzed
_PAIRS_1D = (  # two views of x of one length, with k (an argument, 1 <= k < 8) known at run time only
    ("x[k:]", "x[:-k]"), ("x[1:]", "x[:-1]"), ("x[::-1]", "x"), ("x[::2]", "x[1::2]"), ("x[k:k + 3]", "x[:3]"),
    ("x[-k:]", "x[:k]"), ("x[k:][::-1]", "x[:x.shape[0] - k]"), ("x[1:-1]", "x[:-2]"),
)
_PAIRS_2D = (("X[1:, :]", "X[:-1, :]"), ("X[:, 1:]", "X[:, :-1]"), ("X[::-1, :]", "X"), ("X[:, k - 1:k + 2]", "X[:, :3]"),
             ("X.T[1:, :]", "X.T[:-1, :]"))
_UNARY = ("np.sin({})", "np.tanh({})", "({} * {})", "np.exp(0.3 * {})", "(0.5 * {})")
_BINARY = ("{} * {}", "{} + {}", "{} - {}")


def _term(rng):
    pairs = _PAIRS_2D if rng.random() < 0.35 else _PAIRS_1D
    left, right = pairs[rng.integers(len(pairs))]
    unary = _UNARY[rng.integers(len(_UNARY))]
    left = unary.format(left, left) if "{}" in unary else left
    value = _BINARY[rng.integers(len(_BINARY))].format(left, right)
    if pairs is _PAIRS_2D and rng.random() < 0.5:
        return f"np.sum(np.sum({value}, axis={int(rng.integers(2))}) ** 2)"
    return f"np.sum({value})"


def random_array_program(seed):
    """(source of ``prog(x, X, k)``, arguments): array code only, indexed by slices, and now
    and then a loop that shortens a value in each iteration."""
    rng = np.random.default_rng(seed)
    lines = ["def prog(x, X, k):", "    s = 0.0"]
    for _ in range(int(rng.integers(1, 4))):
        lines.append(f"    s = s + {_term(rng)}")
    if rng.random() < 0.4:  # a value whose length changes in every iteration
        lines += ["    u = np.sin(x[k:]) * x[:-k]", "    for _ in range(2):",
                  "        u = 0.5 * (u[1:] + u[:-1]) + 0.1 * u[1:] * u[:-1]", "    s = s + np.sum(u ** 2)"]
    lines.append("    return s")
    x, X = rng.uniform(-1.0, 1.0, 8), rng.uniform(-1.0, 1.0, (4, 5))
    k = int(rng.integers(1, 4))
    return "import numpy as np\n\n\n" + "\n".join(lines) + "\n", (x, X, k)


def check_array_program(seed, backend):
    source, args = random_array_program(seed)
    module = load_module(source, stem="bounds")
    try:
        f = module.prog
        compiled = adcompile.compile(f, backend=backend)
        gradient = adcompile.grad(compiled, wrt=(0, 1))
        assert not needs_bounds_checks(gradient.ir(gradient.signature(args))), source
        np.testing.assert_allclose(compiled(*args), f(*args), rtol=1e-10, atol=1e-12, err_msg=source)
        gx, gX = gradient(*args)
        np.testing.assert_allclose(gx, gradient_by_differences(lambda v: f(v, *args[1:]), args[:1]),
                                   rtol=1e-6, atol=1e-7, err_msg=source)
        np.testing.assert_allclose(gX, gradient_by_differences(lambda v: f(args[0], v, args[2]), args[1:2]),
                                   rtol=1e-6, atol=1e-7, err_msg=source)
        return gx, gX
    finally:
        unload_module(module)


@pytest.mark.parametrize("seed", range(60))
def test_random_array_programs_lowered_stay_in_range(seed, monkeypatch):
    """Lowered as for numba and run as Python: an index past an array's end raises."""
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    check_array_program(seed, "python")


@pytest.mark.parametrize("seed", range(3))
def test_random_array_programs_on_numba_with_the_checks_forced_on(seed, monkeypatch):
    unchecked = check_array_program(seed, "numba")
    monkeypatch.setattr(specialised, "needs_bounds_checks", lambda fn_ir: True)
    checked = check_array_program(seed, "numba")
    for a, b in zip(unchecked, checked):
        np.testing.assert_array_equal(a, b)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(100, 400))
def test_many_random_array_programs_lowered(seed, monkeypatch):
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    check_array_program(seed, "python")
