"""Run many random programs through adcompile's oracles, shrink the failures, save them.

    python scripts/random_programs.py --count 10000 --seed 0 [--mode lowered|numba|python] [--jobs 2]
        [--out randprog_failures] [--shrink-seconds 120] [--per-kind 2]

Modes (tests/randprog/modes.py): ``lowered`` (the default) is the Python backend with the numba
lowering (loop fusion, buffer reuse, slice writes as loops) applied, as ADCOMPILE_FUSE=all does;
``numba`` the default backend; ``python`` the Python backend without the lowering.

Prints a progress line, then a summary (programs, passed, rejected, wrong gradients, crashes,
by kind). Failing seeds are listed in failing_seeds.txt; up to --per-kind failures of each
kind are shrunk and written as a self-contained file into the output folder.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
os.environ.setdefault("ADCOMPILE_CACHE_DIR", "/tmp/randprog_cache")

from randprog.modes import MODES  # noqa: E402
from randprog.runner import options_for, run_batch  # noqa: E402
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
    opts = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)

    start = time.monotonic()
    seeds = range(opts.seed, opts.seed + opts.count)
    summary = run_batch(seeds, opts.mode, jobs=opts.jobs, progress=True)
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


if __name__ == "__main__":
    sys.exit(main())
