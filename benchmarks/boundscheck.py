"""Cost of numba's bounds checks (``adcompile.compile(f, boundscheck=...)``) on the workloads.

    python benchmarks/boundscheck.py [--size tiny|full] [--only NAME ...]

Each workload's adcompile forward and gradient are compiled twice, with bounds checks (the
default: an index out of range raises IndexError) and without; both must agree, then they
are timed in alternating rounds (the machine is shared: alternating spreads a slow period
over both) and the ratios checked / unchecked printed (1.00: the checks cost nothing).
"""
import single_thread  # noqa: F401  (first: pins every library to one thread before it loads)

import argparse
import os
import statistics
import sys
import tempfile

os.environ.setdefault("ADCOMPILE_CACHE_DIR", os.path.join(tempfile.gettempdir(), "adcompile_bench_boundscheck"))

import harness  # noqa: E402
import workloads  # noqa: E402

DEFAULT_WORKLOADS = ("rosenbrock", "spring", "logistic")
ROUNDS = 5
BUDGET_S = {"tiny": 0.02, "full": 0.3}  # per variant and round


def build(workload, data, boundscheck):
    harness.BOUNDSCHECK = boundscheck
    try:
        implementation = workload.adcompile_version(data)
        implementation.forward()  # compiled now, with this option
        implementation.gradient()
    finally:
        harness.BOUNDSCHECK = True
    return implementation


def alternating_medians(calls, budget_s):
    """The median over ``ROUNDS`` rounds of each call's median time, the calls alternating."""
    times = [[] for _ in calls]
    for _ in range(ROUNDS):
        for k, call in enumerate(calls):
            times[k].append(harness.median_seconds(call, budget_s, warmup=1))
    return [statistics.median(t) for t in times]


def measure(name, size):
    workload = workloads.load(name)
    data = workload.make_inputs(size)
    checked, unchecked = build(workload, data, True), build(workload, data, False)
    for what in ("forward", "gradient"):
        harness.check_agreement(harness.flat_numpy(getattr(checked, what)()),
                                harness.flat_numpy(getattr(unchecked, what)()), f"boundscheck=False ({what})", name)
    forward_on, forward_off, gradient_on, gradient_off = alternating_medians(
        [checked.forward, unchecked.forward, checked.gradient, unchecked.gradient], BUDGET_S[size])
    print(f"{workload.TITLE:45s} forward {forward_on * 1e3:9.3f} ms / {forward_off * 1e3:9.3f} ms = "
          f"{forward_on / forward_off:5.2f}   gradient {gradient_on * 1e3:9.3f} ms / {gradient_off * 1e3:9.3f} ms = "
          f"{gradient_on / gradient_off:5.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("tiny", "full"), default="full")
    parser.add_argument("--only", nargs="+", choices=workloads.NAMES, metavar="NAME", default=DEFAULT_WORKLOADS)
    arguments = parser.parse_args(argv)
    print(f"boundscheck on / off, {arguments.size} size, median of {ROUNDS} alternating rounds, "
          "one thread (ratios above 1: the checks' cost)")
    for name in arguments.only:
        measure(name, arguments.size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
