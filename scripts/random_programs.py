"""Run many random programs through adcompile's oracles, shrink the failures, save them.

    python scripts/random_programs.py --count 10000 --seed 0 [--mode lowered|numba|python] [--jobs 2]
        [--out randprog_failures] [--shrink-seconds 120] [--per-kind 2] [--log FILE]

Modes (tests/randprog/modes.py): ``lowered`` (the default) is the Python backend with the numba
lowering (loop fusion, buffer reuse, slice writes as loops) applied, as ADCOMPILE_FUSE=all does;
``numba`` the default backend; ``python`` the Python backend without the lowering.

Prints a progress line, then a summary (programs, passed, rejected, wrong gradients, crashes,
by kind). Failing seeds are listed in failing_seeds.txt; up to --per-kind failures of each
kind are shrunk and written as a self-contained file into the output folder.

``--log FILE`` makes a long profile resumable: every program's outcome is appended to FILE as
a JSON line as soon as it is known, and a later run with the same FILE, mode and seed range
checks only the seeds the file does not hold yet (its summary counts them all).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
os.environ.setdefault("ADCOMPILE_CACHE_DIR", "/tmp/randprog_cache")

from randprog.generator import generate  # noqa: E402
from randprog.modes import MODES  # noqa: E402
from randprog.oracles import Outcome  # noqa: E402
from randprog.runner import Result, Summary, options_for, run_batch  # noqa: E402
from randprog.shrink import shrink, snippet  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0, help="first program seed")
    parser.add_argument("--mode", "--backend", dest="mode", choices=MODES, default="lowered")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--out", default="randprog_failures")
    parser.add_argument("--shrink-seconds", type=float, default=120.0)
    parser.add_argument("--per-kind", type=int, default=2, help="shrink at most this many failures of each kind")
    parser.add_argument("--log", help="append each outcome to this JSON-lines file; resume from it")
    opts = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)

    start = time.monotonic()
    seeds = range(opts.seed, opts.seed + opts.count)
    summary, on_result = Summary(), None
    if opts.log:
        done = _load_log(opts.log, opts.mode, seeds, summary)
        print(f"{len(done)} of the seeds are in {opts.log} already")
        seeds = [seed for seed in seeds if seed not in done]
        log = open(opts.log, "a")

        def on_result(result):
            outcome = result.outcome
            log.write(json.dumps({"seed": result.seed, "mode": opts.mode, "status": outcome.status,
                                  "kind": outcome.kind, "detail": outcome.detail[:2000]}) + "\n")
            log.flush()
    summary = run_batch(seeds, opts.mode, jobs=opts.jobs, progress=True, summary=summary, on_result=on_result)
    print(f"ran {opts.count} programs (seeds {opts.seed}..{opts.seed + opts.count - 1}, "
          f"mode {opts.mode}) in {time.monotonic() - start:.0f}s")
    print(summary.report())

    os.makedirs(opts.out, exist_ok=True)
    with open(os.path.join(opts.out, "failing_seeds.txt"), "w") as handle:
        for result in summary.failures:
            handle.write(f"{result.seed} {result.outcome.kind}\n")
    shrunk_kinds = {}
    for result in summary.failures:
        kind = result.outcome.kind
        if len(shrunk_kinds.get(kind, [])) >= opts.per_kind:
            continue
        options = options_for(result.seed, opts.mode)
        program, outcome = result.program, result.outcome
        if kind == "crash:process-died":  # shrinking it here would kill this process too
            path = os.path.join(opts.out, f"{kind.replace(':', '_')}_seed{result.seed}.py")
            with open(path, "w") as handle:
                handle.write(snippet(program, outcome, options["backend"]))
            shrunk_kinds.setdefault(kind, []).append(path)
            print(f"seed {result.seed} killed its process: {path}")
            continue
        # shrink in the fast lowered mode when the failure reproduces there
        if opts.mode == "numba":
            python_options = dict(options, backend="lowered")
            small, small_outcome = shrink(program, kind, budget_seconds=opts.shrink_seconds, **python_options)
            if small_outcome is not None:
                options = python_options
            else:
                small, small_outcome = shrink(program, kind, budget_seconds=opts.shrink_seconds, **options)
        else:
            small, small_outcome = shrink(program, kind, budget_seconds=opts.shrink_seconds, **options)
        if small_outcome is None:  # flaky: report the unshrunk program
            small, small_outcome = program, outcome
        path = os.path.join(opts.out, f"{kind.replace(':', '_')}_seed{result.seed}.py")
        with open(path, "w") as handle:
            handle.write(snippet(small, small_outcome, options["backend"]))
        shrunk_kinds.setdefault(kind, []).append(path)
        print(f"shrunk seed {result.seed} ({kind}): {len(program.source)} -> {len(small.source)} chars: {path}")
    return 1 if summary.failures else 0


def _load_log(path, mode, seeds, summary):
    """Add the outcomes that ``path`` holds for ``mode`` and ``seeds`` to ``summary``; return
    their seeds. A failure's program is generated again from its seed, for shrinking."""
    done = set()
    if not os.path.exists(path):
        return done
    wanted = set(seeds)
    with open(path) as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:  # a line cut short when a run was stopped
                continue
            seed = entry["seed"]
            if entry["mode"] != mode or seed not in wanted or seed in done:
                continue
            outcome = Outcome(entry["status"], entry["kind"], entry["detail"])
            summary.add(Result(seed, mode, outcome, generate(seed) if outcome.failed else None))
            done.add(seed)
    return done


if __name__ == "__main__":
    sys.exit(main())
