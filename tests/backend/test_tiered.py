"""Tiered execution (``adcompile/backend/tiers.py``): the generated Python answers first calls
while numba compiles in the background, then calls switch to machine code.

The rest of the suite runs untiered (``conftest.py``); these tests switch tiers on per
function (``tiered=True``). Nothing here depends on timing: where a test needs numba to be
still compiling, it holds the background compile at a gate (``compile_for`` patched) until it
lets it go, and it waits for the switch with ``tier(wait=True)``.
"""
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import adcompile
from adcompile.api import specialised
from adcompile.backend import tiers
from adcompile.errors import GeneratedCodeError


def softplus_sum(x, c):
    return np.sum(np.log(1.0 + np.exp(c * x))) + 0.5 * x @ x


def expected_gradient(x, c):
    return c / (1.0 + np.exp(-c * x)) + x


def looped(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + x[i] * x[i]
    return total


X = np.array([0.3, -1.2, 2.0])


@pytest.fixture
def fresh_tiers(monkeypatch):
    """No tiered function shared with another test, and numba's disk cache taken as empty
    (a function in it is loaded without tiers)."""
    monkeypatch.setattr(tiers, "_tiered", {})
    monkeypatch.setattr(specialised, "loads_quickly", lambda source, name: False)


@pytest.fixture
def gate(monkeypatch, fresh_tiers):
    """Fresh tiers whose background compiles wait at a gate the test opens with
    ``gate.set()``; ``gate.compiles`` counts the compiles started."""
    opened = threading.Event()
    opened.compiles = 0
    original = tiers.compile_for

    def gated_compile(dispatcher, args):
        opened.compiles += 1
        opened.wait()
        original(dispatcher, args)
    monkeypatch.setattr(tiers, "compile_for", gated_compile)
    yield opened
    opened.set()  # never leave a compile waiting


def test_python_first_then_machine_code_with_equal_results(gate):
    gradient = adcompile.grad(adcompile.compile(softplus_sum, tiered=True))
    first = gradient(X, 1.5)
    assert gradient.tier() == "python"
    np.testing.assert_allclose(first, expected_gradient(X, 1.5), rtol=1e-12)
    assert adcompile.gradcheck(adcompile.compile(softplus_sum, backend="python"), (X, 1.5), wrt=0)
    gate.set()
    assert gradient.tier(wait=True) == "numba"
    second = gradient(X, 1.5)
    assert gradient.tier() == "numba"
    np.testing.assert_allclose(second, first, rtol=1e-13, atol=1e-15)
    assert gate.compiles == 1


def test_first_calls_from_several_threads_start_one_compile(gate):
    gradient = adcompile.grad(adcompile.compile(softplus_sum, tiered=True))
    results, errors = [], []

    def call(c):
        try:
            results.append((c, gradient(X, c)))
        except Exception as error:  # reported below
            errors.append(error)
    threads = [threading.Thread(target=call, args=(1.0 + k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for c, value in results:
        np.testing.assert_allclose(value, expected_gradient(X, c), rtol=1e-12)
    assert len(results) == 4 and gradient.tier() == "python"
    gate.set()
    assert gradient.tier(wait=True) == "numba"
    assert gate.compiles == 1


def test_a_numba_failure_reaches_the_next_calls_as_generated_code_error(monkeypatch, fresh_tiers):
    from numba.core.errors import TypingError

    def failing_compile(dispatcher, args):
        raise TypingError("a typing failure planted by the test")
    monkeypatch.setattr(tiers, "compile_for", failing_compile)
    gradient = adcompile.grad(adcompile.compile(softplus_sum, tiered=True))
    np.testing.assert_allclose(gradient(X, 2.0), expected_gradient(X, 2.0), rtol=1e-12)
    with pytest.raises(GeneratedCodeError):
        gradient.tier(wait=True)
    for _ in range(2):  # every call after, not only the first
        with pytest.raises(GeneratedCodeError) as raised:
            gradient(X, 2.0)
        assert "planted by the test" in str(raised.value.__cause__)


def test_waiting_for_numba_is_an_option(fresh_tiers):
    untiered = adcompile.compile(softplus_sum, tiered=False)
    assert untiered(X, 1.0) == pytest.approx(softplus_sum(X, 1.0))
    assert untiered.tier() == "numba"
    as_the_environment_says = adcompile.compile(softplus_sum)  # conftest: ADCOMPILE_TIERED=0
    as_the_environment_says(X, 1.0)
    assert as_the_environment_says.tier() == "numba"
    assert adcompile.compile(softplus_sum, backend="python", tiered=True)(X, 1.0) == pytest.approx(softplus_sum(X, 1.0))


def updated_in_place(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return np.sum(x)


def test_code_with_loops_writing_into_an_argument_answers_as_python_first(gate):
    f = adcompile.compile(updated_in_place, tiered=True)
    x = X.copy()
    assert f(x) == pytest.approx(2.0 * np.sum(X)) and f.tier() == "python"
    np.testing.assert_array_equal(x, 2.0 * X)  # written once
    gate.set()
    assert f.tier(wait=True) == "numba"
    assert f(x) == pytest.approx(4.0 * np.sum(X)) and f.tier() == "numba"
    np.testing.assert_array_equal(x, 4.0 * X)


def drift_in_place(x, n, out):
    """Writes into ``x`` at every step, and into ``out`` through a view of it."""
    head = out[:2]
    for i in range(n):
        k = i % x.shape[0]
        x[k] = x[k] + 1e-9 * np.sin(x[(i + 1) % x.shape[0]])
        head[i % 2] = head[i % 2] + 1e-9
    return np.sum(x)


def test_a_python_run_writing_into_arguments_puts_them_back_when_it_hands_over(fresh_tiers):
    """A loop of 10**8 steps as Python would take minutes: it stops once numba's code is ready,
    with thousands of steps written into ``x`` and ``out``; those are put back, and the machine
    code's run leaves the arguments exactly as a run of the machine code alone does."""
    f = adcompile.compile(drift_in_place, tiered=True)
    n = 10 ** 8
    x, out = X.copy(), np.zeros(3)
    result = f(x, n, out)
    assert f.tier() == "numba"
    x_expected, out_expected = X.copy(), np.zeros(3)
    assert result == adcompile.compile(drift_in_place, tiered=False)(x_expected, n, out_expected)
    np.testing.assert_array_equal(x, x_expected)
    np.testing.assert_array_equal(out, out_expected)


def test_the_backward_half_of_a_vjp_with_loops_waits_for_numba(gate, monkeypatch):
    """It pops the tapes its forward half filled: a stopped run would leave them short, so it
    is compiled by numba at its first call, not tiered."""
    def rows_tanh(A):
        s = A[0]
        for row in A:
            s = np.tanh(row) + s
        return s

    tiered_names = []
    load_tiered = specialised.load_tiered
    monkeypatch.setattr(specialised, "load_tiered",
                        lambda *args, **kwargs: tiered_names.append(args[2]) or load_tiered(*args, **kwargs))
    A, ct = np.arange(6.0).reshape(2, 3) / 7.0, np.array([1.0, -2.0, 0.5])
    gate.set()
    value, pullback = adcompile.vjp(adcompile.compile(rows_tanh, tiered=True), A)
    expected = np.array([ct * (1.0 - np.tanh(A[k]) ** 2) for k in range(2)])
    expected[0] += ct
    np.testing.assert_allclose(pullback(ct)[0], expected, rtol=1e-12)
    assert tiered_names == ["rows_tanh_vjp_forward"]


WARM_SCRIPT = """
import json
import numpy as np
import adcompile

def f(x):
    return np.sum(np.sin(x) * x)

def h(x):
    return np.sum(np.cos(x) * x)

g, k = adcompile.grad(adcompile.compile(f)), adcompile.grad(adcompile.compile(h))
x = np.linspace(0.0, 1.0, 7)
first = g(x)
tiers = {"g first": g.tier()}
tiers["g next"] = g.tier(wait=True)
second = k(x)
tiers["k first"] = k.tier()
print(json.dumps(tiers))
print(json.dumps([first.tolist(), second.tolist()]))
"""


def test_a_warm_cache_answers_first_as_python_until_numba_has_started(tmp_path):
    """The first machine code a process loads waits for numba's start (its import and typing
    registries: most of a second), so it loads behind the Python tier as a compile does; once
    numba has started, code in the disk cache is loaded at its first call (milliseconds)."""
    script = tmp_path / "warm.py"
    script.write_text(WARM_SCRIPT)
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"), ADCOMPILE_FINISH_COMPILES="0")

    def run(tiered):
        done = subprocess.run([sys.executable, str(script)], env={**env, "ADCOMPILE_TIERED": tiered},
                              capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        return [json.loads(line) for line in done.stdout.splitlines()[-2:]]

    cold_tiers, cold = run("0")  # untiered: both compiled into the cache at their first calls
    assert set(cold_tiers.values()) == {"numba"}
    warm_tiers, warm = run("1")
    assert warm_tiers == {"g first": "python", "g next": "numba", "k first": "numba"}
    np.testing.assert_allclose(warm, cold, rtol=1e-13)
    x = np.linspace(0.0, 1.0, 7)
    np.testing.assert_allclose(cold[0], np.sin(x) + x * np.cos(x), rtol=1e-13)
