"""Checkpointed loops: peak memory and time of the checkpointed gradient against the taped
gradient and the forward, and the recomputations against revolve's least count.

    python benchmarks/checkpointing.py [--steps 200000] [--taped-steps 20000] [--spring-steps 1000000]

Two workloads: a 1-D heat equation (1,000 cells, an array state written in place) and a damped
spring (two scalars). Each figure comes from a fresh process (numba backend): the function is
compiled on a short run, freed heap memory is returned to the system, the peak resident set
is reset (Linux ``/proc/self/clear_refs``) and the measured call reports its time and how far
the peak rose above the memory in use before it. The taped gradient of the heat equation needs
about 16 KB per step, so it runs at ``--taped-steps`` only (with the checkpointed one beside it).
``snapshots=None`` everywhere: the rule of docs/checkpointing.md picks the count.
"""
import argparse
import ctypes
import gc
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import adcompile
from adcompile.runtime.checkpoint_schedule import recomputed_iterations, repetitions, revolve_minimum
from adcompile.runtime.kernels.bookkeeping import checkpoint_snapshots
from process_memory import kilobytes

CELLS = 1000
KAPPA = 0.25


def heat(u0, kappa, n):
    u = u0.copy()
    for t in adcompile.checkpointed(range(n)):
        u[1:-1] = u[1:-1] + kappa * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return np.sum(u * u)


def heat_taped(u0, kappa, n):
    u = u0.copy()
    for t in range(n):
        u[1:-1] = u[1:-1] + kappa * (u[:-2] - 2.0 * u[1:-1] + u[2:])
    return np.sum(u * u)


def spring(x0, v0, k, n):
    x = x0
    v = v0
    dt = 1e-3
    for t in adcompile.checkpointed(range(n)):
        a = -k * x - 0.01 * v
        v = v + dt * a
        x = x + dt * v
    return x * x + v * v


def spring_taped(x0, v0, k, n):
    x = x0
    v = v0
    dt = 1e-3
    for t in range(n):
        a = -k * x - 0.01 * v
        v = v + dt * a
        x = x + dt * v
    return x * x + v * v


PROGRAMS = {"heat": heat, "heat_taped": heat_taped, "spring": spring, "spring_taped": spring_taped}
STATE_BYTES = {"heat": CELLS * 8, "spring": 16}
WRT = {"heat": (0, 1), "spring": (0, 1, 2)}  # every float argument: the backward needs the states


def arguments(workload, n):
    if workload == "heat":
        return (np.sin(np.linspace(0.0, np.pi, CELLS)), KAPPA, n)
    return (1.0, 0.0, 4.0, n)


def measure_in_this_process(program, kind, n):
    """(seconds, peak MB above the memory in use) of one call of the forward or the gradient."""
    fn = adcompile.compile(PROGRAMS[program])
    workload = program.replace("_taped", "")
    call = fn if kind == "forward" else adcompile.grad(fn, wrt=WRT[workload])
    call(*arguments(workload, 3))  # compile
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    before = kilobytes("VmRSS")
    start = time.perf_counter()
    call(*arguments(workload, n))
    seconds = time.perf_counter() - start
    return seconds, (kilobytes("VmHWM") - before) / 1024


def measure(program, kind, n):
    environment = dict(os.environ, ADCOMPILE_TIERED="0",
                       ADCOMPILE_CACHE_DIR=os.environ.get("ADCOMPILE_CACHE_DIR", tempfile.gettempdir() + "/adcompile_ck"))
    completed = subprocess.run([sys.executable, __file__, "--child", program, kind, str(n)], env=environment,
                               capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{program} {kind} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def schedule_row(workload, n):
    s = checkpoint_snapshots(n, -1, STATE_BYTES[workload])
    recomputed = recomputed_iterations(n, s)
    return (f"| {workload} | {n:,} | {s:,} | {repetitions(n, s)} | {recomputed:,} | {revolve_minimum(n, s):,} | "
            f"{recomputed / n:.2f} |")


def main(argv):
    if argv[:1] == ["--child"]:
        seconds, peak_mb = measure_in_this_process(argv[1], argv[2], int(argv[3]))
        print(json.dumps({"seconds": seconds, "peak_mb": peak_mb}))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="heat-equation steps (try 2000000)")
    parser.add_argument("--taped-steps", type=int, default=20_000, help="heat-equation steps of the taped gradient")
    parser.add_argument("--spring-steps", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    runs = [("heat", "forward", args.steps), ("heat", "checkpointed gradient", args.steps),
            ("heat", "forward", args.taped_steps), ("heat", "checkpointed gradient", args.taped_steps),
            ("heat_taped", "taped gradient", args.taped_steps),
            ("spring", "forward", args.spring_steps), ("spring", "checkpointed gradient", args.spring_steps),
            ("spring_taped", "taped gradient", args.spring_steps)]
    print("| workload | steps | run | time, s | peak above the memory in use, MB |")
    print("|---|---|---|---|---|")
    forward = {}
    for program, kind, n in runs:
        result = measure(program, kind, n)
        workload = program.replace("_taped", "")
        if kind == "forward":
            forward[workload, n] = result["seconds"]
            ratio = ""
        else:
            ratio = f" ({result['seconds'] / forward[workload, n]:.1f}x the forward)"
        print(f"| {workload} | {n:,} | {kind} | {result['seconds']:.2f}{ratio} | {result['peak_mb']:.1f} |", flush=True)
    print("\n| workload | steps | snapshots | r | iterations recomputed | revolve's least | per step |")
    print("|---|---|---|---|---|---|---|")
    for workload, n in (("heat", args.steps), ("heat", 2_000_000), ("spring", args.spring_steps)):
        print(schedule_row(workload, n))


if __name__ == "__main__":
    main(sys.argv[1:])
