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

FAST_LOWERED_SEEDS = range(0, 300)
FAST_PYTHON_SEEDS = range(300, 360)
FAST_NUMBA_SEEDS = range(100000, 100024)
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
