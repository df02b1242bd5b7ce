"""First-gradient compile time of an ``nn.Sequential`` against its depth (50, 100, 200 layers).

    python benchmarks/sequential_depth.py [DEPTH ...]        # default: 50 100 200

For each depth a fresh Python process (and a fresh ``ADCOMPILE_CACHE_DIR``: a cold cache) builds
``Sequential(Linear(16, 16), Tanh(), ... Linear(16, 1))`` with DEPTH ``Linear``+``Tanh`` pairs and
takes the first gradient of a mean-squared loss on the default (numba) backend, tiered execution
off so that the call waits for numba's machine code. It prints the CPU seconds of that call split
into numba's compilation (the outermost ``numba:compile`` events of ``numba.core.event``, CPU time
of this process) and adcompile's own (the rest: frontend, passes, transforms, code generation,
loading), then the ratio of the deepest to the shallowest. Compile time linear in depth gives a
200/50 ratio near 4; the target is at most 4.5.
"""
import json
import os
import subprocess
import sys
import tempfile
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
        """CPU seconds inside numba's outermost compilations (nested ones are counted once)."""

        def __init__(self):
            self.depth, self.started, self.seconds = 0, 0.0, 0.0

        def on_start(self, event):
            if self.depth == 0:
                self.started = time.process_time()
            self.depth += 1

        def on_end(self, event):
            self.depth -= 1
            if self.depth == 0:
                self.seconds += time.process_time() - self.started

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
    started = time.process_time()
    gradient = adcompile.grad(mse)(model, X, y)
    total = time.process_time() - started
    assert np.all(np.isfinite(gradient["0.weight"]))
    print(json.dumps({"depth": depth, "cpu_seconds": total, "numba_seconds": listener.seconds,
                      "adcompile_seconds": total - listener.seconds}))


def measure(depth):
    """The child's timings for ``depth`` layers, in a fresh process with a fresh cache."""
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=tempfile.mkdtemp(prefix="adcompile_depth_"),
               ADCOMPILE_TIERED="0")
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
    depths = [int(a) for a in arguments] or [50, 100, 200]
    rows = [measure(depth) for depth in depths]
    print(f"{'layers':>7} {'CPU s':>8} {'adcompile s':>12} {'numba s':>8}")
    for row in rows:
        print(f"{row['depth']:>7} {row['cpu_seconds']:>8.2f} {row['adcompile_seconds']:>12.2f} "
              f"{row['numba_seconds']:>8.2f}")
    first, last = rows[0], rows[-1]
    print(f"{last['depth']}/{first['depth']} ratio: total {last['cpu_seconds'] / first['cpu_seconds']:.2f}x, "
          f"adcompile {last['adcompile_seconds'] / first['adcompile_seconds']:.2f}x, "
          f"numba {last['numba_seconds'] / first['numba_seconds']:.2f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
