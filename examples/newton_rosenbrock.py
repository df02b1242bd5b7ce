"""Newton's method on the Rosenbrock function with a compiled gradient and Hessian.

The Hessian is forward mode over reverse mode (``adcompile.hessian``); each step solves
(H + lam I) p = -g, with the damping lam raised whenever a step fails to decrease f
(Levenberg-Marquardt style). Prints the iterates' distance to the minimum at (1, ..., 1).
"""
import numpy as np

import adcompile


@adcompile.compile
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def newton(x, steps=100, tol=1e-10):
    gradient, hessian = adcompile.grad(rosenbrock), adcompile.hessian(rosenbrock)
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
        print(f"step {k:2d}: f = {rosenbrock(x):.3e}, |x - 1| = {np.linalg.norm(x - 1.0):.3e}")
    return x


def main():
    x = newton(np.array([-1.2, 1.0]))  # the classic start, around the curved valley
    print("minimum found at", x)
    return x


if __name__ == "__main__":
    main()
