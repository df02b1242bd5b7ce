"""Speed of adcompile gradients against hand-written code, as ratios measured in one run.

    python benchmarks/bench_speed.py

Cases (from ROADMAP.md): a 1000-step scalar loop (damped spring) against a hand-written
numba reverse loop; the Rosenbrock gradient on 1e6 elements against its own forward and a
hand-written fused numba loop; logistic-regression gradient against hand-written numpy.
Times are the median of repeated runs after a warm-up call (compilation excluded).
"""
import time

import numba
import numpy as np

import adcompile


def median_time(fn, *args, repeat=21):
    fn(*args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


# ---------------------------------------------------------------- damped spring
def spring(k, c):
    x, v, dt = 1.0, 0.0, 0.01
    for _ in range(1000):
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    return x


@numba.njit(cache=True)
def spring_grad_by_hand(k, c):
    xs = np.empty(1001)
    vs = np.empty(1001)
    x, v, dt = 1.0, 0.0, 0.01
    for i in range(1000):
        xs[i], vs[i] = x, v
        a = -k * x - c * v
        v = v + dt * a
        x = x + dt * v
    bx, bv, bk, bc = 1.0, 0.0, 0.0, 0.0
    for i in range(999, -1, -1):
        x, v = xs[i], vs[i]
        a = -k * x - c * v
        v_new = v + dt * a
        # x_new = x + dt * v_new
        bv_new = bv + dt * bx
        # v_new = v + dt * a
        ba = dt * bv_new
        bv = bv_new
        bk -= ba * x
        bc -= ba * v
        bx = bx - ba * k
        bv = bv - ba * c
    return bk, bc


# ---------------------------------------------------------------- rosenbrock
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@numba.njit(cache=True)
def rosenbrock_grad_by_hand(x):
    g = np.zeros_like(x)
    for i in range(x.shape[0] - 1):
        t = x[i + 1] - x[i] * x[i]
        g[i] += -400.0 * t * x[i] - 2.0 * (1.0 - x[i])
        g[i + 1] += 200.0 * t
    return g


# ---------------------------------------------------------------- logistic regression
def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def logistic_grad_by_hand(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p - y) / X.shape[0]


def main():
    rows = []
    f = adcompile.compile(spring)
    g = adcompile.grad(f, wrt=(0, 1))
    assert np.allclose(g(2.0, 0.3), spring_grad_by_hand(2.0, 0.3))
    rows.append(("spring 1000 steps: grad / hand-written numba reverse",
                 median_time(g, 2.0, 0.3) / median_time(spring_grad_by_hand, 2.0, 0.3)))
    rows.append(("spring 1000 steps: grad / forward", median_time(g, 2.0, 0.3) / median_time(f, 2.0, 0.3)))

    x = np.random.default_rng(0).standard_normal(1_000_000)
    f = adcompile.compile(rosenbrock)
    g = adcompile.grad(f)
    assert np.allclose(g(x), rosenbrock_grad_by_hand(x))
    rows.append(("rosenbrock 1e6: grad / forward", median_time(g, x, repeat=7) / median_time(f, x, repeat=7)))
    rows.append(("rosenbrock 1e6: grad / hand-written fused loop",
                 median_time(g, x, repeat=7) / median_time(rosenbrock_grad_by_hand, x, repeat=7)))

    rng = np.random.default_rng(1)
    X, y, w = rng.standard_normal((10_000, 20)), (rng.random(10_000) > 0.5) * 1.0, rng.standard_normal(20)
    g = adcompile.grad(adcompile.compile(logistic))
    assert np.allclose(g(w, X, y), logistic_grad_by_hand(w, X, y))
    rows.append(("logistic 10000x20: grad / hand-written numpy",
                 median_time(g, w, X, y) / median_time(logistic_grad_by_hand, w, X, y)))

    for name, ratio in rows:
        print(f"{name:58s} {ratio:8.2f}x")


if __name__ == "__main__":
    main()
