"""Random-program differential testing (issue 8).

Fast profile (default run): a fixed range of seeds through the plain-Python backend plus a
small sample compiled by numba; every program must pass its oracles or be rejected with an
AdCompileError (rejections are allowed, but counted and bounded). Long profile
(``pytest -m slow``): many more programs. ``scripts/random_programs.py`` runs and shrinks
larger batches.
"""
import os

import pytest

from randprog.runner import run_batch
from randprog.shrink import shrink, snippet

os.environ.setdefault("ADCOMPILE_CACHE_DIR", "/tmp/randprog_cache")

FAST_PYTHON_SEEDS = range(0, 200)
FAST_NUMBA_SEEDS = range(100000, 100008)
SLOW_PYTHON_SEEDS = range(1000, 4000)
MAX_REJECTED_SHARE = 0.10  # of the programs not discarded (at least 2 allowed in a small sample)


def describe_failures(summary, backend, shrink_seconds=20.0, limit=1):
    """The summary and a few shrunk reproductions, for the assertion message."""
    parts = [summary.report()]
    for result in summary.failures[:limit]:
        from randprog.runner import options_for
        small, outcome = shrink(result.program, result.outcome.kind, budget_seconds=shrink_seconds,
                                **options_for(result.seed, backend))
        parts.append(snippet(small, outcome or result.outcome, backend))
    return "\n\n".join(parts)


def check_batch(seeds, backend):
    summary = run_batch(seeds, backend)
    checked = summary.counts["programs"] - summary.counts["discarded"]
    assert summary.counts["discarded"] <= 0.1 * summary.counts["programs"], summary.report()
    assert not summary.failures, describe_failures(summary, backend)
    assert summary.counts["rejected"] <= max(2, MAX_REJECTED_SHARE * checked), summary.report()


def test_random_programs_python_backend():
    check_batch(FAST_PYTHON_SEEDS, "python")


def test_random_programs_numba_sample():
    check_batch(FAST_NUMBA_SEEDS, "numba")


@pytest.mark.slow
def test_random_programs_long_python():
    check_batch(SLOW_PYTHON_SEEDS, "python")


@pytest.mark.slow
def test_random_programs_long_numba():
    check_batch(range(200000, 200060), "numba")
