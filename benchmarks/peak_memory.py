"""Peak memory of one gradient call, for every implementation of a workload.

    python benchmarks/peak_memory.py [--workload logistic] [--size full]

Each implementation runs in a fresh process: it builds the inputs, calls the gradient once
(compiling it), returns freed heap memory to the system, resets the process's peak resident set size (Linux: ``/proc/self/clear_refs``),
calls the gradient again and reports how far the peak rose above the memory in use before the
call: the memory that call needed beyond its inputs and the compiled code. Prints a markdown
table; docs/performance.md describes it.
"""
import single_thread  # noqa: F401  (first: pins every library to one thread before it loads)

import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile

import harness
from process_memory import kilobytes
import peers as peer_discovery
import workloads

HERE = os.path.dirname(os.path.abspath(__file__))


def measure_in_this_process(workload_name, key, size):
    """Peak kilobytes above the resident set of the second gradient call."""
    workload = workloads.load(workload_name)
    peers = peer_discovery.discover(quiet=True)
    implementation, = harness.build_implementations(workload, workload.make_inputs(size), peers, only_key=key)
    implementation.gradient()  # compile and warm up
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)  # glibc: give freed heap pages back, so that reuse shows as growth
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the peak resident set starts again from the current one
    before = kilobytes("VmRSS")
    implementation.gradient()
    return kilobytes("VmHWM") - before


def measure_in_child(workload_name, key, size):
    environment = dict(os.environ, ADCOMPILE_CACHE_DIR=tempfile.mkdtemp(prefix="adcompile_memory_"))
    completed = subprocess.run([sys.executable, __file__, "--child", workload_name, key, size],
                               env=environment, capture_output=True, text=True, check=False, cwd=HERE)
    if completed.returncode != 0:
        raise RuntimeError(f"{key} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])["peak_kb"]


def main(argv):
    if argv[:1] == ["--child"]:
        print(json.dumps({"peak_kb": measure_in_this_process(*argv[1:4])}))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="logistic", choices=workloads.NAMES)
    parser.add_argument("--size", choices=("tiny", "full"), default="full")
    arguments = parser.parse_args(argv)
    workload = workloads.load(arguments.workload)
    implementations = harness.build_implementations(workload, workload.make_inputs("tiny"), peer_discovery.discover())
    print(f"Peak memory of one gradient call: {workload.TITLE} ({arguments.size} size)\n")
    print("| implementation | peak above the memory in use, MB |")
    print("|---|---|")
    for implementation in implementations:
        peak_kb = measure_in_child(arguments.workload, implementation.key, arguments.size)
        print(f"| {implementation.label} | {peak_kb / 1024:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
