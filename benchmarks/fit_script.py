"""A short training script, whole process, side by side: the digits MLP (64-128-10, ReLU,
cross-entropy, Adam lr 1e-3, minibatches of 32, float64) trained for a few epochs, as
adcompile's ``fit`` on numba and as eager PyTorch's loop over the same batches.

    python benchmarks/fit_script.py [--epochs 2] [--repeats 2]

Each run is a new Python process started from nothing (imports, data loading and every compile
included); the figure is the process's CPU seconds (user + system, threads included) and its
wall seconds. adcompile runs once with a fresh ``ADCOMPILE_CACHE_DIR`` (cold: numba's runtime
helpers and the epoch program not compiled yet) and then again with that folder (warm). PyTorch
(if installed) runs with its default threads. Needs scikit-learn for the digits.
"""
import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPOSITORY = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

DATA = """
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
digits = load_digits()
X, X_test, y, y_test = train_test_split(digits.data / 16.0, digits.target.astype(np.int64), test_size=0.25,
                                        random_state=0, stratify=digits.target)
"""

ADCOMPILE = DATA + """
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

TORCH = DATA + """
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


def run_script(text, epochs, cache_dir=None):
    """(CPU seconds, wall seconds, last output line) of ``text`` run in a new process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (REPOSITORY, os.environ.get("PYTHONPATH")) if p))
    if cache_dir is not None:
        env["ADCOMPILE_CACHE_DIR"] = cache_dir
    script = os.path.join(tempfile.mkdtemp(prefix="fit_script_"), "train.py")  # adcompile reads source files
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


def has_torch():
    return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, check=False).returncode == 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2, help="runs of each (the table shows each run)")
    opts = parser.parse_args()
    rows = []
    for _ in range(opts.repeats):
        cache_dir = tempfile.mkdtemp(prefix="adcompile_fit_script_")
        try:
            rows.append(("adcompile fit, fresh cache", *run_script(ADCOMPILE, opts.epochs, cache_dir)))
            rows.append(("adcompile fit, same cache again", *run_script(ADCOMPILE, opts.epochs, cache_dir)))
        finally:
            shutil.rmtree(cache_dir, ignore_errors=True)
        if has_torch():
            rows.append(("eager PyTorch loop", *run_script(TORCH, opts.epochs)))
    print(f"digits MLP, {opts.epochs} epochs, whole process")
    print("| run | CPU s | wall s | output |")
    print("|---|---|---|---|")
    for name, cpu, wall, output in rows:
        print(f"| {name} | {cpu:.2f} | {wall:.2f} | {output} |")


if __name__ == "__main__":
    main()
