"""Run batches of random programs and summarise the outcomes.

``run_one(seed, mode)`` generates and checks one program in a mode of ``modes.py`` ("python",
"lowered" or "numba"): a share of them with second-order oracles, ``jacobian(mode="fwd")`` or a
composition of three transforms (drawn from a random stream of the seed's own, apart from the
generator's); lowered and numba runs also compare against the plain-Python backend without the
lowering. ``run_batch`` runs many, optionally in worker processes, and returns a ``Summary``
with the failing programs.
"""
import collections
import concurrent.futures
import random
import sys
import time
import traceback
from dataclasses import dataclass, field

from .generator import generate
from .higher_order import THIRD_ORDER_FORMS
from .oracles import Outcome, check_with_timeout

SECOND_ORDER_EVERY = 4  # every 4th seed also gets hvp/hessian checks
PROGRAM_TIMEOUT = {"python": 60.0, "lowered": 90.0, "numba": 300.0}  # CPU seconds; more is a "timeout" failure
# shares of the programs with the jacobian(mode="fwd") check and with a composition of three
# transforms; numba compiles every derived function for seconds, so it gets fewer
JACOBIAN_FWD_SHARE = {"python": 0.3, "lowered": 0.3, "numba": 0.15}
THIRD_ORDER_SHARE = {"python": 0.15, "lowered": 0.15, "numba": 0.04}


@dataclass
class Result:
    seed: int
    backend: str
    outcome: object
    program: object = None  # kept only for failures


@dataclass
class Summary:
    counts: collections.Counter = field(default_factory=collections.Counter)
    kinds: collections.Counter = field(default_factory=collections.Counter)
    rejection_messages: collections.Counter = field(default_factory=collections.Counter)
    failures: list = field(default_factory=list)
    features: collections.Counter = field(default_factory=collections.Counter)

    def add(self, result, features=()):
        outcome = result.outcome
        self.counts["programs"] += 1
        self.counts[outcome.status] += 1
        self.features.update(features)
        if outcome.status != "passed":
            self.kinds[outcome.kind] += 1
        if outcome.status == "rejected":
            self.rejection_messages[outcome.detail[:120]] += 1
        if outcome.failed:
            self.failures.append(result)

    def report(self):
        c = self.counts
        checked = c["programs"] - c["discarded"]
        lines = [f"programs {c['programs']}: passed {c['passed']}, rejected {c['rejected']} "
                 f"({100.0 * c['rejected'] / max(checked, 1):.1f}% of non-discarded), "
                 f"wrong {c['wrong']}, crashed {c['crash']}, timeouts {c['timeout']}, discarded {c['discarded']} "
                 f"(not benign at the sample point)"]
        for kind, n in sorted(self.kinds.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {n:6d}  {kind}")
        if self.rejection_messages:
            lines.append("most common rejection messages:")
            for message, n in self.rejection_messages.most_common(8):
                lines.append(f"  {n:6d}  {message}")
        return "\n".join(lines)


def options_for(seed, mode, first_order_only=False):
    """The oracles a seed's program gets in ``mode`` (``check_program``'s keywords);
    ``first_order_only``: none of second or third order, and the quick first order (a numba
    sample for the default run)."""
    draw = random.Random(seed + 0x20)
    jacobian_fwd = draw.random() < JACOBIAN_FWD_SHARE[mode]
    third_order = draw.choice(THIRD_ORDER_FORMS) if draw.random() < THIRD_ORDER_SHARE[mode] else None
    if first_order_only:
        return dict(backend=mode, compare_backends=mode != "python", quick=True)
    return dict(backend=mode, second_order=seed % SECOND_ORDER_EVERY == 0,
                compare_backends=mode != "python", jacobian_fwd=jacobian_fwd, third_order=third_order)


def run_one(seed, backend="python", first_order_only=False):
    try:
        program = generate(seed)
    except Exception as error:  # noqa: BLE001  (a generator bug: counted, never fatal)
        return Result(seed, backend, Outcome("discarded", "discarded:generator-error", repr(error))), []
    outcome = check_with_timeout(program, PROGRAM_TIMEOUT[backend], **options_for(seed, backend, first_order_only))
    return Result(seed, backend, outcome, program if outcome.failed else None), sorted(program.features)


def _run_guarded(seed, backend, first_order_only=False):
    try:
        return run_one(seed, backend, first_order_only)
    except BaseException as error:  # noqa: BLE001  (a harness bug must not stop a batch)
        detail = "".join(traceback.format_exception(type(error), error, error.__traceback__))[-1500:]
        return Result(seed, backend, Outcome("discarded", "discarded:harness-error", detail)), []


# Seeds per task of a parallel batch: numba programs take tens of seconds each, so that a stopped
# profile loses little and its log grows steadily.
CHUNK_SIZE = {"numba": 2}


def _run_chunk(seeds, backend, first_order_only=False):
    return [_run_guarded(seed, backend, first_order_only) for seed in seeds]


def _run_pool(chunks, jobs, backend, first_order_only, record):
    """Run ``chunks`` in a pool of ``jobs`` processes; the chunks still to run when a worker
    process dies (numba or LLVM crashing it). The pool runs chunks in order, so the first
    unfinished ones (``jobs`` and the one queued) may have been running: their programs run
    again one by one, each in a process of its own, and the one that kills it is a crash."""
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        futures = [(pool.submit(_run_chunk, chunk, backend, first_order_only), chunk) for chunk in chunks]
        unfinished = []
        for future, chunk in futures:
            try:
                record(future.result())
            except concurrent.futures.process.BrokenProcessPool:
                unfinished.append(chunk)
    suspects, rest = unfinished[:jobs + 1], unfinished[jobs + 1:]
    if suspects:
        sys.stderr.write(f"\na worker process died: seeds {[s for c in suspects for s in c]} run again one by one\n")
    for chunk in suspects:
        for seed in chunk:
            record([_run_isolated(seed, backend, first_order_only)])
    return rest


def _run_isolated(seed, backend, first_order_only):
    """One program in a process of its own; a process that dies is the program's crash."""
    with concurrent.futures.ProcessPoolExecutor(1) as pool:
        try:
            return pool.submit(_run_chunk, [seed], backend, first_order_only).result()[0]
        except concurrent.futures.process.BrokenProcessPool as error:
            outcome = Outcome("crash", "crash:process-died", f"the process running the program died: {error!r}")
            return Result(seed, backend, outcome, generate(seed)), []


def run_batch(seeds, backend="python", jobs=1, progress=False, first_order_only=False, summary=None,
              on_result=None):
    """Run ``seeds`` in ``backend``; ``summary`` (a Summary) may hold the outcomes of earlier runs,
    and ``on_result(result)`` is called as each program's outcome arrives (a resumable log)."""
    summary = Summary() if summary is None else summary
    start = time.monotonic()
    seeds = list(seeds)
    already = summary.counts["programs"]

    def record(pairs):
        for result, features in pairs:
            summary.add(result, features)
            if on_result is not None:
                on_result(result)
        if progress:
            c = summary.counts
            sys.stderr.write(f"\r{c['programs']}/{already + len(seeds)} programs, {c['wrong']} wrong, "
                             f"{c['crash']} crashed, {c['rejected']} rejected, "
                             f"{time.monotonic() - start:.0f}s ")
            sys.stderr.flush()

    if jobs <= 1:
        for k in range(0, len(seeds), 10):
            record(_run_chunk(seeds[k:k + 10], backend, first_order_only))
    else:
        size = CHUNK_SIZE.get(backend, 20)
        pending = [seeds[k:k + size] for k in range(0, len(seeds), size)]
        while pending:
            pending = _run_pool(pending, jobs, backend, first_order_only, record)
    if progress:
        sys.stderr.write("\n")
    summary.failures.sort(key=lambda r: r.seed)
    return summary
