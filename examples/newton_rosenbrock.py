"""Newton's method on the Rosenbrock function with a compiled gradient and Hessian.

The Hessian is forward mode over reverse mode (``adcompile.hessian``); each step solves
(H + lam I) p = -g, with the damping lam raised whenever a step fails to decrease f
(Levenberg-Marquardt style). Prints each iterate's value and distance to the minimum at
(1, 1), and saves ``newton_rosenbrock.png``, the path on a contour plot of f, if matplotlib
is installed.

    python examples/newton_rosenbrock.py [OUTPUT_FOLDER]
"""
import sys
from pathlib import Path

import numpy as np

import adcompile


@adcompile.compile
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def newton(x, steps=100, tol=1e-10):
    """The iterates of damped Newton's method from ``x``, the start included."""
    gradient, hessian = adcompile.grad(rosenbrock), adcompile.hessian(rosenbrock)
    path = [x]
    lam = 1e-3
    for k in range(steps):
        g = gradient(x)
        if np.linalg.norm(g) < tol:
            break
        H = hessian(x)
        while True:
            step = np.linalg.solve(H + lam * np.eye(x.size), -g)
            if rosenbrock(x + step) < rosenbrock(x):
                x, lam = x + step, lam / 3.0
                break
            lam *= 4.0
        path.append(x)
        print(f"step {k:2d}: x = ({x[0]: .6f}, {x[1]: .6f}), f = {rosenbrock(x):.3e}, "
              f"|x - 1| = {np.linalg.norm(x - 1.0):.3e}")
    return np.array(path)


def pyplot_or_none():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")  # files only, no window
    import matplotlib.pyplot as plt
    return plt


def save_plot(file, path):
    plt = pyplot_or_none()
    if plt is None:
        print("matplotlib is not installed: plot skipped (pip install 'adcompile[examples]')")
        return None
    u, v = np.meshgrid(np.linspace(-2.0, 2.0, 300), np.linspace(-1.0, 3.0, 300))
    f = 100.0 * (v - u ** 2) ** 2 + (1.0 - u) ** 2  # the same function, on a grid, in numpy
    figure, axes = plt.subplots(figsize=(6.5, 5.5))
    contours = axes.contour(u, v, np.log10(f + 1e-3), levels=25, cmap="viridis")
    figure.colorbar(contours, ax=axes, label="log10 f")
    axes.plot(path[:, 0], path[:, 1], "o-", color="tab:red", markersize=4, label="Newton iterates")
    axes.plot(*path[0], "s", color="black", label="start (-1.2, 1)")
    axes.plot(1.0, 1.0, "*", color="gold", markersize=14, markeredgecolor="black", label="minimum (1, 1)")
    axes.set(xlabel="x[0]", ylabel="x[1]", title=f"damped Newton on Rosenbrock: {len(path) - 1} steps")
    axes.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(file, dpi=90)
    plt.close(figure)
    print(f"saved plot to {file}")
    return file


def main(output_folder="."):
    path = newton(np.array([-1.2, 1.0]))  # the classic start, around the curved valley
    x = path[-1]
    print(f"minimum found at ({x[0]:.9f}, {x[1]:.9f}) after {len(path) - 1} steps")
    plot = save_plot(Path(output_folder) / "newton_rosenbrock.png", path)
    return x, len(path) - 1, plot


if __name__ == "__main__":
    main(*sys.argv[1:])
