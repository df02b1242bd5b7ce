"""The random-program runner counts a program that kills its worker process as a crash and goes
on with the others (``tests/randprog/runner.py``)."""
import os

from randprog import runner
from randprog.oracles import Outcome

KILLER = 7


def _chunk_or_die(seeds, backend, first_order_only=False):
    if KILLER in seeds:
        os._exit(1)  # as numba or LLVM crashing the process
    return [(runner.Result(seed, backend, Outcome("passed")), []) for seed in seeds]


def test_a_program_that_kills_its_process_is_a_crash_and_the_batch_goes_on(monkeypatch):
    monkeypatch.setattr(runner, "_run_chunk", _chunk_or_die)  # the workers are forked with it
    summary = runner.run_batch(range(20), backend="lowered", jobs=2)
    assert summary.counts["programs"] == 20
    assert summary.counts["passed"] == 19
    assert [(r.seed, r.outcome.kind) for r in summary.failures] == [(KILLER, "crash:process-died")]
