"""Tiered execution (``adcompile/backend/tiers.py``): the generated Python answers first calls
while numba compiles in the background, then calls switch to machine code.

The rest of the suite runs untiered (``conftest.py``); these tests switch tiers on per
function (``tiered=True``). Nothing here depends on timing: where a test needs numba to be
still compiling, it holds the background compile at a gate (``compile_for`` patched) until it
lets it go, and it waits for the switch with ``tier(wait=True)``.
"""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import adcompile
from adcompile.api import specialised
from adcompile.backend import loader, tiers
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
    monkeypatch.setattr(specialised, "in_disk_cache", lambda source, name: False)


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


def test_code_with_loops_writing_into_an_argument_waits_for_numba(gate):
    gate.set()
    f = adcompile.compile(updated_in_place, tiered=True)
    assert f(X.copy()) == pytest.approx(2.0 * np.sum(X))
    assert f.tier() == "numba"
    assert gate.compiles == 0


def test_code_with_loops_answers_as_python_then_machine_code(gate):
    f = adcompile.compile(looped, tiered=True)
    gradient = adcompile.grad(f)
    assert f(X) == pytest.approx(np.sum(X * X)) and f.tier() == "python"
    np.testing.assert_allclose(gradient(X), 2.0 * X, rtol=1e-13)
    assert gradient.tier() == "python"
    gate.set()
    assert f.tier(wait=True) == "numba" and gradient.tier(wait=True) == "numba"
    np.testing.assert_allclose(gradient(X), 2.0 * X, rtol=1e-13)


def long_scalar_loop(x, n):
    s = 0.0
    k = 0
    while k < 3:
        for i in range(n):
            s = s + 1e-9 * np.sin(x[i % x.shape[0]] + s)
        k += 1
    return s


def test_a_python_run_still_going_hands_over_to_the_machine_code(fresh_tiers):
    """The Python tier of a loop of 3 x 10**8 steps would take minutes: it stops once numba's
    code is ready (seconds), and the call's result is the machine code's."""
    f = adcompile.compile(long_scalar_loop, tiered=True)
    n = 10 ** 8
    result = f(X, n)
    assert f.tier() == "numba"
    assert result == adcompile.compile(long_scalar_loop, tiered=False)(X, n)


def test_the_python_tier_of_loops_keeps_the_lines_of_the_source():
    from adcompile.backend.handover import with_handover_checks
    source = adcompile.source(adcompile.grad(long_scalar_loop), X, 10)
    checked = with_handover_checks(source, "long_scalar_loop_grad")
    assert len(checked.splitlines()) == len(source.splitlines())
    assert "in _adcompile_each(range(" in checked and "while _adcompile_going() and (" in checked
    for plain, with_checks in zip(source.splitlines(), checked.splitlines()):
        assert plain == with_checks or "_adcompile_" in with_checks


def test_a_warm_disk_cache_needs_no_python_tier(monkeypatch):
    monkeypatch.setattr(tiers, "_tiered", {})
    first = adcompile.compile(softplus_sum, tiered=True)
    first(X, 1.0)
    assert first.tier(wait=True) == "numba"
    monkeypatch.setattr(tiers, "_tiered", {})  # as a new process: nothing loaded,
    monkeypatch.setattr(loader, "_loaded", {})  # numba's files on disk
    second = adcompile.compile(softplus_sum, tiered=True)
    assert second(X, 1.0) == pytest.approx(softplus_sum(X, 1.0))
    assert second.tier() == "numba"


EXITS_WHILE_COMPILING = """
import numpy as np, adcompile

def energy(x, c):
    return np.sum(np.log(1.0 + np.exp(c * x))) + 0.5 * x @ x

gradient = adcompile.grad(adcompile.compile(energy))  # tiered: ADCOMPILE_TIERED=1
gradient(np.array([0.3, -1.2, 2.0]), 1.5)
print(gradient.tier(), flush=True)
"""


def test_the_interpreter_exits_while_numba_compiles(tmp_path):
    script = tmp_path / "exits_while_compiling.py"
    script.write_text(EXITS_WHILE_COMPILING)
    repository = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    environment = {**os.environ, "ADCOMPILE_CACHE_DIR": str(tmp_path / "cache"), "ADCOMPILE_TIERED": "1",
                   "PYTHONPATH": repository}
    completed = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=environment,
                               timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["python"]
    assert "Traceback" not in completed.stderr
