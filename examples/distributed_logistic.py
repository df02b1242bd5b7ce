"""Logistic regression by full-batch gradient descent over data larger than one worker's memory.

    python examples/distributed_logistic.py [--rows 6000000] [--steps 5] [--memory 400MiB]

The data (``--rows`` x 10 float64, 480 MB by default) are generated on the workers by
``dask.array.random`` with a fixed seed, chunk by chunk, inside every gradient: no process ever
holds them whole, and each worker's memory limit (``--memory``) is below their size. The loss is
written for one block of rows; ``adcompile.dask.value_and_grad`` runs its compiled gradient on
every block and averages the blocks weighted by their sizes. The run is repeated on a
LocalCluster of 1 and of 2 workers, printing the loss and the time per gradient (the first
call, which compiles, is reported apart).
"""
import argparse
import time

import numpy as np

import adcompile.dask as adask


def loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def generated_data(rows, cols=10, chunk=250_000, seed=0):
    import dask.array as da
    rng = da.random.RandomState(seed)
    X = rng.normal(size=(rows, cols), chunks=(chunk, cols))
    true_w = np.linspace(-1.0, 1.0, cols)
    y = (rng.random(size=rows, chunks=chunk) < 1.0 / (1.0 + da.exp(-(X @ true_w)))).astype(np.float64)
    return X, y


def descend(client, X, y, steps, lr=2.0):
    value_and_grad = adask.value_and_grad(loss, client=client)
    w = np.zeros(X.shape[1])
    times = []
    for step in range(steps + 1):
        start = time.perf_counter()
        value, gradient = value_and_grad(w, X, y)
        times.append(time.perf_counter() - start)
        w = w - lr * gradient
        print(f"  step {step}: loss {value:.6f}  ({times[-1]:.2f} s)")
    return w, times


def main(argv=None):
    import distributed
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=6_000_000)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--memory", default="400MiB", help="memory limit of each worker")
    args = parser.parse_args(argv)
    X, y = generated_data(args.rows)
    size = X.nbytes + y.nbytes
    print(f"data: {X.shape[0]} x {X.shape[1]} + labels, {size / 2 ** 20:.0f} MiB generated on the workers; "
          f"worker memory limit {args.memory}")
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      memory_limit=args.memory, dashboard_address=":0") as cluster, \
                distributed.Client(cluster) as client:
            print(f"{workers} worker{'s' if workers > 1 else ''}:")
            w, times = descend(client, X, y, args.steps)
            print(f"  first call (compiles) {times[0]:.2f} s; then {np.median(times[1:]):.2f} s per gradient "
                  f"(median); w = {np.round(w, 3)}")


if __name__ == "__main__":
    main()
