"""Fitting a damped spring simulation to observations by gradient descent.

The simulation is an ordinary Python loop (1000 explicit Euler steps); adcompile
differentiates through it in reverse mode (the loop becomes a loop in the gradient code) and
the whole training loop runs compiled, calling ``adcompile.value_and_grad`` inside.
"""
import numpy as np

import adcompile

STEPS, DT = 1000, 0.01


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
    for _ in range(iterations):
        loss, (gk, gc) = adcompile.value_and_grad(misfit, wrt=(0, 1))(k, c, observed)
        k = k - lr * gk
        c = c - lr * gc
    return k, c


def main():
    observed = simulate(4.0, 0.3)
    k, c = fit(3.0, 0.1, observed, 1.0, 2000)
    print(f"fitted k = {k:.4f}, c = {c:.4f} (true 4.0, 0.3)")
    print("the generated gradient of the simulation:")
    print(adcompile.source(adcompile.grad(misfit, wrt=(0, 1)), k, c, observed))
    return k, c


if __name__ == "__main__":
    main()
