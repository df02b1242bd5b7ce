"""Short scripts, whole process, side by side with a peer: what a user waits for when a new
process runs a script that compiles its derivatives.

    python benchmarks/whole_process.py [fit|gmm ...] [--epochs 2] [--repeats 2]

``fit``: the digits MLP (64-128-10, ReLU, cross-entropy, Adam lr 1e-3, minibatches of 32,
float64) trained for ``--epochs`` epochs, as adcompile's ``fit`` on numba and as eager
PyTorch's loop over the same batches. ``gmm``: the GMM log-likelihood's gradient (5
components, 3 dimensions, 50 points) evaluated once, written with loops as the AD benchmark
suites write it for adcompile, and with ``jax.numpy`` under ``jax.jit(jax.grad(...))`` (JAX
cannot compile the loop form in reasonable time: it unrolls Python loops).

Each run is a new Python process started from nothing (imports, data and every compile
included); the figures are the process's CPU seconds (user + system, threads included) and
its wall seconds. adcompile runs once with a fresh ``ADCOMPILE_CACHE_DIR`` (cold: numba's
runtime helpers and the program not compiled yet) and then again with that folder (warm). A
compile still running when a run ends is not finished after it (``ADCOMPILE_FINISH_COMPILES=0``:
it would run during the next measurement), so the warm run finds what the cold run's own
background compile wrote before it ended. A third run starts once a run with
``ADCOMPILE_TIERED=0`` (not timed) has put all the machine code in that folder: what every run
after the first finds once the detached process that finishes a compile has ended. The peers (if installed) run with their default
threads. ``fit`` needs scikit-learn.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)

DATA = """
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
digits = load_digits()
X, X_test, y, y_test = train_test_split(digits.data / 16.0, digits.target.astype(np.int64), test_size=0.25,
                                        random_state=0, stratify=digits.target)
"""

FIT_ADCOMPILE = DATA + """
import adcompile
from adcompile import nn
import adcompile.nn.functional as F

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden, self.out = nn.Linear(64, 128), nn.Linear(128, 10)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))

def loss_fn(model, images, labels):
    return F.cross_entropy(model(images), labels)

model = MLP().compile("numba")
optimizer = adcompile.optim.Adam(model.parameters(), lr=1e-3)
history = adcompile.fit(loss_fn, model, optimizer, X, y, epochs=EPOCHS, batch_size=32, progress=False)
print("losses", [round(loss, 4) for loss in history])
"""

FIT_TORCH = DATA + """
import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).double()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
X, y = torch.tensor(X), torch.tensor(y)
losses = []
for epoch in range(EPOCHS):
    order = torch.randperm(len(X))
    total, batches = 0.0, 0
    for start in range(0, len(X), 32):
        batch = order[start:start + 32]
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(X[batch]), y[batch])
        loss.backward()
        optimizer.step()
        total, batches = total + float(loss), batches + 1
    losses.append(total / batches)
print("losses", [round(loss, 4) for loss in losses])
"""


GMM_DATA = """
import numpy as np
from gmm_loop_form import arguments
alphas, means, icf, x = arguments()
"""

GMM_ADCOMPILE = GMM_DATA + """
import adcompile
from gmm_loop_form import gmm

gradient = adcompile.grad(adcompile.compile(gmm), wrt=(0, 1, 2))(alphas, means, icf, x)
print("gradient", round(float(sum(np.sum(g) for g in gradient)), 6))
"""

GMM_JAX = GMM_DATA + """
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp

def gmm(alphas, means, icf, x):
    n = x.shape[0]
    q = jnp.exp(icf)
    diff = q[None, :, :] * (x[:, None, :] - means[None, :, :])
    terms = alphas[None, :] + jnp.sum(icf, axis=1)[None, :] - 0.5 * jnp.sum(diff * diff, axis=2)
    m = jnp.max(terms, axis=1)
    total = jnp.sum(m + jnp.log(jnp.sum(jnp.exp(terms - m[:, None]), axis=1)))
    ma = jnp.max(alphas)
    return total - n * (ma + jnp.log(jnp.sum(jnp.exp(alphas - ma)))) + 0.5 * jnp.sum(jnp.exp(icf) ** 2)

gradient = jax.jit(jax.grad(gmm, argnums=(0, 1, 2)))(alphas, means, icf, x)
print("gradient", round(float(sum(np.sum(np.asarray(g)) for g in gradient)), 6))
"""

# workload -> (its adcompile script, the peer's name, the peer's module, the peer's script)
WORKLOADS = {"fit": (FIT_ADCOMPILE, "eager PyTorch loop", "torch", FIT_TORCH),
             "gmm": (GMM_ADCOMPILE, "JAX jit(grad)", "jax", GMM_JAX)}


def run_script(text, epochs, cache_dir=None, **settings):
    """(CPU seconds, wall seconds, last output line) of ``text`` run in a new process, with the
    environment variables ``settings`` set."""
    env = dict(os.environ, **settings, PYTHONPATH=os.pathsep.join(p for p in (REPOSITORY, HERE, os.environ.get("PYTHONPATH")) if p))
    # no compile finished after the script exits (adcompile/backend/finish_compiles.py): it would
    # run during the next measurement, and into a cache folder removed meanwhile
    env["ADCOMPILE_FINISH_COMPILES"] = "0"
    if cache_dir is not None:
        env["ADCOMPILE_CACHE_DIR"] = cache_dir
    script = os.path.join(tempfile.mkdtemp(prefix="whole_process_"), "script.py")  # adcompile reads source files
    with open(script, "w") as handle:
        handle.write(f"EPOCHS = {epochs}\n{text}")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    completed = subprocess.run([sys.executable, script], env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if completed.returncode != 0:
        raise RuntimeError(completed.stderr[-3000:])
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, completed.stdout.strip().splitlines()[-1]


def importable(module):
    return subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, check=False).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workloads", nargs="*", help=f"some of {', '.join(WORKLOADS)} (default: all)")
    parser.add_argument("--epochs", type=int, default=2, help="fit's epochs")
    parser.add_argument("--repeats", type=int, default=2, help="runs of each (the table shows each run)")
    opts = parser.parse_args()
    unknown = [w for w in opts.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}: choose from {', '.join(WORKLOADS)}")
    for workload in opts.workloads or WORKLOADS:
        ours, peer_name, peer_module, theirs = WORKLOADS[workload]
        rows = []
        for _ in range(opts.repeats):
            cache_dir = tempfile.mkdtemp(prefix="adcompile_whole_process_")
            try:
                rows.append(("adcompile, fresh cache", *run_script(ours, opts.epochs, cache_dir)))
                rows.append(("adcompile, same cache again", *run_script(ours, opts.epochs, cache_dir)))
                run_script(ours, opts.epochs, cache_dir, ADCOMPILE_TIERED="0")  # waits for numba: fills the cache
                rows.append(("adcompile, machine code in the cache", *run_script(ours, opts.epochs, cache_dir)))
            finally:
                shutil.rmtree(cache_dir, ignore_errors=True)
            if importable(peer_module):
                rows.append((peer_name, *run_script(theirs, opts.epochs)))
        print(f"\n{workload}" + (f", {opts.epochs} epochs" if workload == "fit" else "") + ", whole process")
        print("| run | CPU s | wall s | output |")
        print("|---|---|---|---|")
        for name, cpu, wall, output in rows:
            print(f"| {name} | {cpu:.2f} | {wall:.2f} | {output[:90]} |")


if __name__ == "__main__":
    main()
