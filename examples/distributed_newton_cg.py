"""Newton-CG on sharded data: L2-regularised logistic regression whose rows live on Dask workers.

    python examples/distributed_newton_cg.py [--rows 200000] [--workers 2]

Each Newton step needs the whole-data gradient (``adcompile.dask.value_and_grad``) and solves
``H p = -g`` by conjugate gradients, where every product ``H v`` is one
``adcompile.dask.hvp`` over the row blocks (forward-over-reverse on each block where it lives,
tree-reduced): the Hessian is never formed and the data never leave the workers. A backtracking
line search keeps each step a descent step. The loss is a mean over rows plus an L2 penalty;
with ``reduce="mean"`` the penalty, the same on every block, counts once. The run ends when the
gradient's norm is below ``tol`` (usually 5-7 Newton steps) and checks the result against the
gradient written by hand in numpy over the whole data.
"""
import argparse
import time

import numpy as np

import adcompile.dask as adask

LAM = 1e-3  # the L2 penalty


def loss(w, X, y):
    z = X @ w
    # log(1 + exp(-z)) and log(1 + exp(z)) without overflow
    log_p = -np.logaddexp(0.0, -z)
    log_q = -np.logaddexp(0.0, z)
    return -np.mean(y * log_p + (1.0 - y) * log_q) + 0.5 * LAM * np.sum(w ** 2)


def conjugate_gradient(product, b, tol, max_iter):
    """Solve ``A x = b`` for a symmetric positive definite A given by ``product(v) = A v``."""
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rr = r @ r
    for k in range(max_iter):
        if np.sqrt(rr) <= tol:
            return x, k
        Ap = product(p)
        alpha = rr / (p @ Ap)
        x += alpha * p
        r -= alpha * Ap
        rr_new = r @ r
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x, max_iter


def newton_cg(loss_fn, X, y, client, tol=1e-8, max_steps=20):
    """Minimise ``loss_fn(w, X, y)`` over sharded ``X``, ``y`` (dask arrays chunked along rows).
    Returns the solution and a list of (loss, gradient norm, CG iterations) per Newton step."""
    value_and_grad = adask.value_and_grad(loss_fn, client=client)
    w = np.zeros(X.shape[1])
    history = []
    for _ in range(max_steps):
        value, g = value_and_grad(w, X, y)
        norm = float(np.linalg.norm(g))
        if norm < tol:
            history.append((float(value), norm, 0))
            break
        # inexact Newton: solve H p = -g to a relative accuracy min(0.5, sqrt(|g|))
        hessian_times = lambda v: adask.hvp(loss_fn, (w, X, y), (v, None, None), client=client)  # noqa: E731
        step, iterations = conjugate_gradient(hessian_times, -g, min(0.5, np.sqrt(norm)) * norm, 2 * w.size)
        history.append((float(value), norm, iterations))
        t = 1.0
        while True:  # backtracking (Armijo); a Newton step of a convex loss is usually accepted at once
            new_value, _ = value_and_grad(w + t * step, X, y)
            if new_value <= value + 1e-4 * t * (g @ step) or t < 1e-8:
                break
            t *= 0.5
        w = w + t * step
    return w, history


def generated_data(rows, cols=8, chunk=25_000, seed=0):
    import dask.array as da
    rng = da.random.RandomState(seed)
    X = rng.normal(size=(rows, cols), chunks=(chunk, cols))
    true_w = np.linspace(-2.0, 2.0, cols)
    y = (rng.random(size=rows, chunks=chunk) < 1.0 / (1.0 + da.exp(-(X @ true_w)))).astype(np.float64)
    return X.persist(), y.persist()


def hand_gradient(w, X, y):
    """The gradient of ``loss`` written by hand, over the whole data (numpy)."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return X.T @ (p - y) / len(y) + LAM * w


def main(rows=200_000, workers=2, tol=1e-8):
    import distributed
    with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
        X, y = generated_data(rows)
        start = time.perf_counter()
        w, history = newton_cg(loss, X, y, client, tol=tol)
        elapsed = time.perf_counter() - start
        for k, (value, norm, iterations) in enumerate(history):
            print(f"Newton step {k}: loss {value:.10f}  |gradient| {norm:.3e}  CG iterations {iterations}")
        check = float(np.linalg.norm(hand_gradient(w, X.compute(), y.compute())))
    print(f"{rows} rows on {workers} workers: {len(history) - 1} Newton steps in {elapsed:.1f} s")
    print(f"|gradient| at the solution, by hand over the whole data: {check:.3e}")
    assert history[-1][1] < tol and check < 10 * tol, "Newton-CG did not converge"
    return w, history, check


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--workers", type=int, default=2)
    main(**vars(parser.parse_args()))
