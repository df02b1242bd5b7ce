"""First-gradient compile time of an ``nn.Sequential`` against its depth (50, 100, 200 layers).

    python benchmarks/sequential_depth.py [DEPTH ...]           # default: 50 100 200
    python benchmarks/sequential_depth.py --numba [DEPTH ...]   # wait for numba's machine code

For each depth a fresh Python process (and a fresh ``ADCOMPILE_CACHE_DIR``: a cold cache) builds
``Sequential(Linear(16, 16), Tanh(), ... Linear(16, 1))`` with DEPTH ``Linear``+``Tanh`` pairs and
takes the first gradient of a mean-squared loss on the default (numba) backend. It prints the
CPU seconds of that call split into adcompile's own (the calling thread's CPU time outside numba:
frontend, passes, transforms, code generation, loading, the Python tier's run) and numba's
compilation (the outermost ``numba:compile`` events of ``numba.core.event``, CPU time of the
thread compiling), and the ratio of the deepest to the shallowest.

By default the call is tiered as a user's is: it answers from the generated Python while numba
compiles in a background thread, which the child does not wait for (numba's column is then only
what it compiled in the calling thread: the runtime helpers' first compile, before the cache has
them). With ``--numba`` the call waits for numba's machine code (``ADCOMPILE_TIERED=0``), and
numba's column is its whole compile. Compile time linear in depth gives a 200/50 ratio near 4;
the target is at most 4.5.
"""
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)
WIDTH = 16


def _child(depth):
    """In the child process: time one first gradient; print a JSON line."""
    import numpy as np
    import numba.core.event as numba_event

    import adcompile
    from adcompile import nn

    class _NumbaCompileCPU(numba_event.Listener):
        """CPU seconds inside numba's outermost compilations (nested ones counted once), per thread."""

        def __init__(self):
            self.depth, self.started, self.seconds = {}, {}, {}

        def on_start(self, event):
            thread = threading.get_ident()
            if self.depth.get(thread, 0) == 0:
                self.started[thread] = time.thread_time()
            self.depth[thread] = self.depth.get(thread, 0) + 1

        def on_end(self, event):
            thread = threading.get_ident()
            self.depth[thread] -= 1
            if self.depth[thread] == 0:
                self.seconds[thread] = self.seconds.get(thread, 0.0) + time.thread_time() - self.started[thread]

    adcompile.modules.init.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(WIDTH, WIDTH), nn.Tanh()]
    model = nn.Sequential(*layers, nn.Linear(WIDTH, 1))
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((32, WIDTH)), rng.standard_normal(32)

    def mse(model, X, y):
        return np.mean((model(X)[:, 0] - y) ** 2)

    listener = _NumbaCompileCPU()
    numba_event.register("numba:compile", listener)
    caller = threading.get_ident()
    started = time.thread_time()
    gradient = adcompile.grad(mse)(model, X, y)
    caller_seconds = time.thread_time() - started
    assert np.all(np.isfinite(gradient["0.weight"]))
    in_caller = listener.seconds.get(caller, 0.0)
    print(json.dumps({"depth": depth, "adcompile_seconds": caller_seconds - in_caller,
                      "numba_seconds": sum(listener.seconds.values())}))


def measure(depth, wait_for_numba):
    """The child's timings for ``depth`` layers, in a fresh process with a fresh cache."""
    # no compile finished after the child exits (adcompile/backend/finish_compiles.py): it would
    # run during the next measurement
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=tempfile.mkdtemp(prefix="adcompile_depth_"),
               ADCOMPILE_FINISH_COMPILES="0")
    env.pop("ADCOMPILE_TIERED", None)
    if wait_for_numba:
        env["ADCOMPILE_TIERED"] = "0"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPOSITORY, env.get("PYTHONPATH")) if p)
    completed = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", str(depth)],
                               env=env, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"depth {depth} failed:\n{completed.stderr[-3000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(arguments):
    if arguments[:1] == ["--child"]:
        _child(int(arguments[1]))
        return
    wait_for_numba = arguments[:1] == ["--numba"]
    depths = [int(a) for a in arguments[wait_for_numba:]] or [50, 100, 200]
    rows = [measure(depth, wait_for_numba) for depth in depths]
    print(f"{'layers':>7} {'adcompile s':>12} {'numba s':>8} {'total s':>8}"
          + ("" if wait_for_numba else "   (tiered: numba compiles in the background)"))
    for row in rows:
        row["total"] = row["adcompile_seconds"] + row["numba_seconds"]
        print(f"{row['depth']:>7} {row['adcompile_seconds']:>12.2f} {row['numba_seconds']:>8.2f} {row['total']:>8.2f}")
    first, last = rows[0], rows[-1]
    ratios = [f"adcompile {last['adcompile_seconds'] / first['adcompile_seconds']:.2f}x"]
    if wait_for_numba:
        ratios += [f"numba {last['numba_seconds'] / first['numba_seconds']:.2f}x",
                   f"total {last['total'] / first['total']:.2f}x"]
    print(f"{last['depth']}/{first['depth']} ratio: " + ", ".join(ratios))


if __name__ == "__main__":
    main(sys.argv[1:])
