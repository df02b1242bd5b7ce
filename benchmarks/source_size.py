"""Size of generated source with and without the simplification passes (simplify, CSE, DCE).

    python benchmarks/source_size.py

Prints, for a few functions and derivatives, the number of non-comment source lines of the
generated function before and after the passes.
"""
import numpy as np

import adcompile
from adcompile.api import specialised


def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def spring(k, c):
    x, v, dt = 1.0, 0.0, 0.01
    for _ in range(100):
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    return x


def code_lines(source):
    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


def measure():
    rng = np.random.default_rng(0)
    X, y, w = rng.standard_normal((5, 3)), rng.random(5), rng.standard_normal(3)
    cases = [
        ("grad(logistic)", lambda: adcompile.grad(adcompile.compile(logistic, backend="python")), (w, X, y)),
        ("grad(rosenbrock)", lambda: adcompile.grad(adcompile.compile(rosenbrock, backend="python")), (w,)),
        ("hessian column of rosenbrock",
         lambda: adcompile.hessian(adcompile.compile(rosenbrock, backend="python")).derived, (w,)),
        ("grad(spring)", lambda: adcompile.grad(adcompile.compile(spring, backend="python")), (2.0, 0.1)),
        ("grad(grad(spring))",
         lambda: adcompile.grad(adcompile.grad(adcompile.compile(spring, backend="python"))), (2.0, 0.1)),
    ]
    rows = []
    for name, make, args in cases:
        sizes = []
        for optimize in (False, True):
            specialised.OPTIMIZE = optimize
            sizes.append(code_lines(adcompile.source(make(), *args)))
        specialised.OPTIMIZE = True
        rows.append((name, *sizes))
    return rows


def main():
    print(f"{'function':32s} {'lines before':>12s} {'lines after':>12s}")
    for name, before, after in measure():
        print(f"{name:32s} {before:12d} {after:12d}")


if __name__ == "__main__":
    main()
