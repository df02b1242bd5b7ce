"""Fitting a damped spring simulation to noisy observations by gradient descent.

The simulation is an ordinary Python loop (1000 explicit Euler steps); adcompile
differentiates through it in reverse mode (the loop becomes a loop in the gradient code) and
the whole training loop runs compiled, calling ``adcompile.value_and_grad`` inside and
recording the loss of every iteration. Saves ``fit_spring.png`` (observed, initial and fitted
trajectories; loss per iteration) if matplotlib is installed.

    python examples/fit_spring.py [OUTPUT_FOLDER]
"""
import sys
import time
from pathlib import Path

import numpy as np

import adcompile

STEPS, DT = 1000, 0.01
TRUE_K, TRUE_C = 4.0, 0.3


def simulate(k, c):
    x, v = 1.0, 0.0
    positions = np.zeros(STEPS)
    for i in range(STEPS):
        a = -k * x - c * v
        v = v + DT * a
        x = x + DT * v
        positions[i] = x
    return positions


def misfit(k, c, observed):
    r = simulate(k, c) - observed
    return np.mean(r * r)


@adcompile.compile
def fit(k, c, observed, lr, iterations):
    losses = np.zeros(iterations)
    for it in range(iterations):
        loss, (gk, gc) = adcompile.value_and_grad(misfit, wrt=(0, 1))(k, c, observed)
        losses[it] = loss
        k = k - lr * gk
        c = c - lr * gc
    return k, c, losses


def pyplot_or_none():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")  # files only, no window
    import matplotlib.pyplot as plt
    return plt


def save_plot(path, observed, initial, fitted, losses):
    plt = pyplot_or_none()
    if plt is None:
        print("matplotlib is not installed: plot skipped (pip install 'adcompile[examples]')")
        return None
    t = DT * np.arange(1, STEPS + 1)
    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    left.plot(t[::10], observed[::10], ".", color="gray", label="observed (noisy)")
    left.plot(t, initial, "--", color="tab:orange", label="initial guess")
    left.plot(t, fitted, color="tab:blue", label="fitted")
    left.set(xlabel="time", ylabel="position", title="damped spring: trajectories")
    left.legend()
    right.loglog(np.arange(1, losses.size + 1), losses)
    right.set(xlabel="iteration", ylabel="mean squared misfit", title="loss per iteration")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    plt.close(figure)
    print(f"saved plot to {path}")
    return path


def main(output_folder="."):
    rng = np.random.default_rng(0)
    observed = simulate(TRUE_K, TRUE_C) + 0.02 * rng.standard_normal(STEPS)
    k0, c0 = 3.0, 0.1
    start = time.perf_counter()
    k, c, losses = fit(k0, c0, observed, 1.0, 300)
    seconds = time.perf_counter() - start
    print(f"fitted k = {k:.4f}, c = {c:.4f} (true {TRUE_K}, {TRUE_C}; first call {seconds:.1f} s, "
          "compilation included)")
    print(f"loss: first iteration {losses[0]:.3e}, last {losses[-1]:.3e} (noise variance 4.0e-04)")
    print("the generated gradient of the simulation:")
    print(adcompile.source(adcompile.grad(misfit, wrt=(0, 1)), k, c, observed))
    plot = save_plot(Path(output_folder) / "fit_spring.png", observed, simulate(k0, c0), simulate(k, c),
                     losses)
    return k, c, losses, plot


if __name__ == "__main__":
    main(*sys.argv[1:])
