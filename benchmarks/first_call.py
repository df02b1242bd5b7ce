"""First-call time of one workload's gradient in a fresh Python process.

    python benchmarks/first_call.py WORKLOAD KEY SIZE    # prints {"seconds": ..., "cpu_seconds": ...}

The child process imports the libraries, builds the inputs and the implementation (nothing is
compiled yet: adcompile, numba and JAX compile on the first call), then times that first
gradient call, compilation included. adcompile's first call is tiered as a user's is (unless
``ADCOMPILE_TIERED=0``): it answers from its generated Python while numba compiles in the
background (a run of loops still going when the machine code is ready continues as machine
code); the child prints which tier ran. The parent gives adcompile a fresh
``ADCOMPILE_CACHE_DIR`` (cold) or reuses one (warm disk cache); JAX and numba start from
nothing in every new process. ``cpu_seconds`` is the process's CPU time during that call (numba's
background compilation included): on a shared machine it varies far less than the wall time.
A compile still running when the child ends is not finished after it
(``ADCOMPILE_FINISH_COMPILES=0``: it would run during the next measurement).
With ``ADCOMPILE_TIERED=0`` and a fresh cache folder that already holds the runtime helpers'
numba code (``<cache>/__pycache__/runtime-*``, copied from an earlier run), it measures what a
new function costs to compile.
"""
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)


def child_environment(cache_dir):
    # no compile finished after the child exits (adcompile/backend/finish_compiles.py): it would
    # run during the next measurement
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=cache_dir, ADCOMPILE_FINISH_COMPILES="0")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPOSITORY, HERE, env.get("PYTHONPATH")) if p)
    return env


def run_child(arguments, cache_dir):
    completed = subprocess.run([sys.executable, *arguments], env=child_environment(cache_dir),
                               capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(arguments)} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])["seconds"]


def first_call_seconds(workload, key, size, cache_dir=None):
    """Seconds of the first gradient call in a new process; a fresh cache unless one is given."""
    cache_dir = cache_dir or tempfile.mkdtemp(prefix="adcompile_first_call_")
    return run_child([os.path.abspath(__file__), workload, key, size], cache_dir)


# The runtime helpers' numba code, compiled once per run: a fresh cache folder gets a copy, as a
# user's cache has them after the first function they compile (run.py's "first call" of a new
# function); the very first compile of the helpers on a machine is measured apart.
HELPERS = tempfile.mkdtemp(prefix="adcompile_helpers_")


def _copy_runtime_helpers(source, destination):
    for folder in glob.glob(os.path.join(source, "__pycache__", "runtime-*")):
        shutil.copytree(folder, os.path.join(destination, "__pycache__", os.path.basename(folder)),
                        dirs_exist_ok=True)


def cold_and_warm_seconds(workload, key, size):
    """(first call in a fresh cache folder holding only the runtime helpers' compiled code,
    first call in another new process with that folder warm)."""
    cache_dir = tempfile.mkdtemp(prefix="adcompile_first_call_")
    _copy_runtime_helpers(HELPERS, cache_dir)
    cold = first_call_seconds(workload, key, size, cache_dir)
    _copy_runtime_helpers(cache_dir, HELPERS)
    return cold, first_call_seconds(workload, key, size, cache_dir)


IMPORT_TIMER = ("import time, json, numpy\nstart = time.perf_counter()\nimport adcompile\n"
                "print(json.dumps({'seconds': time.perf_counter() - start}))")


def import_seconds():
    """``import adcompile`` in a new process (numpy already imported, as in any user's program)."""
    return run_child(["-c", IMPORT_TIMER], tempfile.mkdtemp(prefix="adcompile_import_"))


def main(workload_name, key, size):
    import single_thread  # noqa: F401  (before numpy: one thread, as in the parent)
    import harness
    import peers
    import workloads
    harness.TIERED = None  # as a user's first call: tiered unless ADCOMPILE_TIERED=0
    workload = workloads.load(workload_name)
    wanted = tuple(peer for builder, peer in harness.BUILDERS if builder == key and peer)
    implementation, = harness.build_implementations(workload, workload.make_inputs(size),
                                                    peers.discover(wanted, quiet=True), only_key=key)
    start, start_cpu = time.perf_counter(), time.process_time()
    implementation.gradient()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - start_cpu
    print(json.dumps({"seconds": seconds, "cpu_seconds": cpu_seconds, "tier": adcompile_tier(implementation)}))


def adcompile_tier(implementation):
    """Which tier adcompile's gradient ran ("python" or "numba") where the workload's gradient
    call holds it, else None (another library, or a function form such as ``hvp``)."""
    from adcompile import AdCompileError
    from adcompile.api.derived import DerivedFunction
    cells = getattr(implementation.gradient, "__closure__", None) or ()
    for cell in cells:
        if isinstance(cell.cell_contents, DerivedFunction):
            try:
                return cell.cell_contents.tier()
            except AdCompileError:
                return None
    return None


if __name__ == "__main__":
    main(*sys.argv[1:4])
