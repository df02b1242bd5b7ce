"""The benchmark suite: adcompile against hand-written numpy/numba code and the peers.

    python benchmarks/run.py [--size tiny|full] [--only NAME ...] [--out benchmarks/results.md]

For every workload (``workloads.NAMES``) and every implementation available (adcompile,
numpy and numba by hand, JAX, PyTorch, autograd when installed), in one process, float64,
one thread: the results are checked against adcompile's (a disagreement stops the run with
an error), then forward and gradient are timed (median of repeated calls after warm-up), and
the first gradient call is timed in a fresh process with a fresh cache (adcompile also with a
warm disk cache). Writes the markdown table to ``--out`` and prints it.
"""
import single_thread  # noqa: F401  (first: pins every library to one thread before it loads)

import argparse
import datetime
import os
import platform
import subprocess
import sys

import numba
import numpy as np

import first_call
import harness
import peers as peer_discovery
import workloads
from table import Row, format_first_call, format_number, write_results

TIME_BUDGET_S = {"tiny": 0.02, "full": 1.0}  # per timed call: repeat until spent (at least 5 runs)


def parse_arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=("tiny", "full"), default="full")
    parser.add_argument("--only", nargs="+", choices=workloads.NAMES, metavar="NAME",
                        help=f"workloads to run, of: {', '.join(workloads.NAMES)}")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results.md"))
    parser.add_argument("--first-call", dest="first_call", action=argparse.BooleanOptionalAction, default=None,
                        help="time first calls in fresh processes (default: on at full size, off at tiny)")
    parser.add_argument("--adcompile-backend", choices=("numba", "python"), default="numba",
                        help="python: run adcompile's generated code uncompiled (a quick check, not a benchmark)")
    arguments = parser.parse_args(argv)
    os.environ[harness.BACKEND_VARIABLE] = arguments.adcompile_backend  # first-call children inherit it
    if arguments.first_call is None:
        arguments.first_call = arguments.size == "full"
    return arguments


def check_all_agree(workload, implementations):
    """Compare every implementation's forward and first gradient with adcompile's."""
    reference, *others = implementations
    expected_forward = harness.flat_numpy(reference.forward())
    expected_gradient = harness.first_gradient_result(reference)
    for implementation in others:
        harness.check_agreement(expected_forward, harness.flat_numpy(implementation.forward()),
                                f"{implementation.label} (forward)", workload.NAME)
        harness.check_agreement(expected_gradient, harness.first_gradient_result(implementation),
                                f"{implementation.label} (gradient)", workload.NAME)
    print(f"{workload.NAME}: {len(implementations)} implementations agree")


def first_call_text(workload, key, size):
    if key == "adcompile":
        return format_first_call(*first_call.cold_and_warm_seconds(workload.NAME, key, size))
    return format_first_call(first_call.first_call_seconds(workload.NAME, key, size))


def run_workload(workload, peers, arguments):
    implementations = harness.build_implementations(workload, workload.make_inputs(arguments.size), peers)
    check_all_agree(workload, implementations)
    rows = []
    for implementation in implementations:
        timing = harness.time_implementation(implementation, TIME_BUDGET_S[arguments.size])
        first = first_call_text(workload, implementation.key, arguments.size) if arguments.first_call else None
        adcompile_ms = rows[0].gradient_ms if rows else timing.gradient_s * 1e3
        rows.append(Row(workload.TITLE, implementation.key, implementation.label, timing.forward_s * 1e3,
                        timing.gradient_s * 1e3, adcompile_ms, first))
        print(f"  {implementation.label}: forward {format_number(timing.forward_s * 1e3)} ms, "
              f"gradient {format_number(timing.gradient_s * 1e3)} ms, first call {first or '-'}")
    return rows


def load_average():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def header(arguments, peers, import_s, load_before, load_after):
    versions = [f"Python {platform.python_version()}", f"numpy {np.__version__}", f"numba {numba.__version__}"]
    versions += [f"{name} {version}" for name, version in peers.versions.items()]
    command = "python benchmarks/run.py" + ("" if arguments.size == "full" else f" --size {arguments.size}")
    if arguments.adcompile_backend != "numba":
        command += f" --adcompile-backend {arguments.adcompile_backend}"
    lines = [
        f"# Benchmark results ({arguments.size} size)",
        f"`{command}` on {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"{os.cpu_count()}-core {platform.machine()} machine, float64, {', '.join(versions)}.",
        f"Threads: one for every implementation ({single_thread.describe()}).",
        f"Load: before `{load_before}`; after `{load_after}`. The machine is shared with other "
        "workers running tests, so absolute times are noisy; ratios within one row set are the "
        "steadier figures.",
        "Times are medians of repeated calls after warm-up calls (compilation excluded; a call "
        f"slower than {harness.SLOW_CALL_S:g} s is timed once after its warm-up call). "
        "\"first call s\" is the first gradient call in a fresh process, compilation included "
        "(adcompile: a fresh `ADCOMPILE_CACHE_DIR` holding only the runtime helpers' numba code, "
        "compiled once per run, as a user's cache holds it after their first function; then in "
        "brackets a new process with the disk cache warm). \"gradient / adcompile's\" below 1 "
        "means faster than adcompile.",
    ]
    if import_s is not None:
        lines.append(f"`import adcompile` in a new process (numpy already imported): {import_s:.3f} s.")
    return lines


def main(argv=None):
    arguments = parse_arguments(argv)
    names = arguments.only or workloads.NAMES
    peers = peer_discovery.discover()
    load_before = load_average()
    rows, notes = [], []
    for name in names:
        workload = workloads.load(name)
        rows += run_workload(workload, peers, arguments)
        sizes = ", ".join(f"{key} = {value}" for key, value in workload.SIZES[arguments.size].items())
        notes.append(f"{workload.TITLE} ({sizes}): {workload.NOTE}")
    import_s = first_call.import_seconds() if arguments.first_call else None
    text = write_results(arguments.out, header(arguments, peers, import_s, load_before, load_average()),
                         rows, notes)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
