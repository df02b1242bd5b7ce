"""Random-program differential testing (tests/randprog).

Fast profile (default run): a fixed range of seeds in the ``lowered`` mode (the Python backend
with the numba lowering applied: loop fusion, buffer reuse, slice writes as loops; the default
path's code, run by the interpreter, which loads fast), a few in the ``python`` mode (no
lowering), and a sample compiled by numba (the default backend), with the first-order oracles
only (numba compiles every derived function for seconds). Every program must pass its oracles
or be rejected with an AdCompileError (rejections are allowed, but counted and bounded). Long
profile (``pytest -m slow``): many more programs in each mode. ``scripts/random_programs.py``
runs and shrinks larger batches.
"""
import os

import pytest

from randprog.modes import lowering
from randprog.runner import options_for, run_batch
from randprog.shrink import shrink, snippet

os.environ.setdefault("ADCOMPILE_CACHE_DIR", "/tmp/randprog_cache")

FAST_LOWERED_SEEDS = range(0, 240)
FAST_PYTHON_SEEDS = range(300, 340)
FAST_NUMBA_SEEDS = range(100000, 100012)
SLOW_LOWERED_SEEDS = range(1000, 4000)
SLOW_PYTHON_SEEDS = range(4000, 5000)
SLOW_NUMBA_SEEDS = range(200000, 200150)
MAX_REJECTED_SHARE = 0.10  # of the programs not discarded (at least 2 allowed in a small sample)


def describe_failures(summary, mode, first_order_only=False, shrink_seconds=20.0, limit=1):
    """The summary and a few shrunk reproductions, for the assertion message."""
    parts = [summary.report()]
    for result in summary.failures[:limit]:
        small, outcome = shrink(result.program, result.outcome.kind, budget_seconds=shrink_seconds,
                                **options_for(result.seed, mode, first_order_only))
        parts.append(snippet(small, outcome or result.outcome, mode))
    return "\n\n".join(parts)


def check_batch(seeds, mode, first_order_only=False):
    summary = run_batch(seeds, mode, first_order_only=first_order_only)
    checked = summary.counts["programs"] - summary.counts["discarded"]
    assert summary.counts["discarded"] <= 0.1 * summary.counts["programs"], summary.report()
    assert not summary.failures, describe_failures(summary, mode, first_order_only)
    assert summary.counts["rejected"] <= max(2, MAX_REJECTED_SHARE * checked), summary.report()


def test_random_programs_lowered():
    check_batch(FAST_LOWERED_SEEDS, "lowered")


def test_random_programs_python_backend():
    check_batch(FAST_PYTHON_SEEDS, "python")


def test_random_programs_numba_sample():
    check_batch(FAST_NUMBA_SEEDS, "numba", first_order_only=True)


def test_the_lowered_mode_sets_the_lowering_for_its_programs_only(monkeypatch):
    monkeypatch.setenv("ADCOMPILE_FUSE", "1")
    with lowering("lowered"):
        assert os.environ["ADCOMPILE_FUSE"] == "all"
    assert os.environ["ADCOMPILE_FUSE"] == "1"
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    with lowering("python"):
        assert "ADCOMPILE_FUSE" not in os.environ
    assert os.environ["ADCOMPILE_FUSE"] == "all"


@pytest.mark.slow
def test_random_programs_long_lowered():
    check_batch(SLOW_LOWERED_SEEDS, "lowered")


@pytest.mark.slow
def test_random_programs_long_python():
    check_batch(SLOW_PYTHON_SEEDS, "python")


@pytest.mark.slow
def test_random_programs_long_numba():
    check_batch(SLOW_NUMBA_SEEDS, "numba")


LOOP_PROGRAM = '''
import numpy as np
import adcompile

def f(x, a):
    s = 0.0
    w = x.copy()
    for i in range(2):
        w[:] = w - 0.1 * np.tanh(w) * a
        s = s + np.sum(np.sin(w) * a) + w[i] ** 2
    return s
'''


def _loop_program():
    import numpy as np

    from randprog.generator import Program
    return Program(LOOP_PROGRAM, (np.array([0.3, -0.2, 0.5]), 0.7), ("x", "a"), seed=0)


class _Scaled:
    """adcompile with one transform's results scaled: a wrong derivative the oracles must see."""

    def __init__(self, real, name):
        self.real, self.name = real, name

    def __getattr__(self, attr):
        value = getattr(self.real, attr)
        if attr != self.name:
            return value
        if attr == "jvp":  # jvp(f, primals, tangents) -> (out, tangent_out)
            return lambda *args: (lambda out: (out[0], 1.001 * out[1]))(value(*args))

        def transform(*args, **kwargs):
            derived = value(*args, **kwargs)

            def scaled(*call_args):
                out = derived(*call_args)
                return tuple(1.001 * o for o in out) if isinstance(out, tuple) else 1.001 * out
            return scaled
        return transform


@pytest.mark.parametrize("name, options", [
    ("jacobian", dict(jacobian_fwd=True)),
    ("grad", dict(third_order="grad_of_hessian")),
    ("grad", dict(third_order="jvp_of_grad_of_grad")),
    ("jvp", dict(third_order="jvp_of_hessian")),
])
def test_the_higher_order_oracles_fail_on_a_wrong_derivative(monkeypatch, name, options):
    from randprog import higher_order
    from randprog.oracles import check_program
    program = _loop_program()
    assert check_program(program, "lowered", **options).status == "passed"
    monkeypatch.setattr(higher_order, "adcompile", _Scaled(higher_order.adcompile, name))
    outcome = check_program(program, "lowered", **options)
    assert outcome.status == "wrong", outcome
