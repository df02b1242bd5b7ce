"""Time per full-batch gradient: adcompile.dask on a LocalCluster (1 and 2 workers) against the
single-process compiled gradient of the same data.

    python benchmarks/bench_dask_gradient.py [--rows 2000000] [--cols 10] [--chunk 250000] [--repeat 7]

The data are generated on the workers and persisted there (the single-process run computes
the same array into this process). Each figure is the median of ``--repeat`` gradients after a
warm-up call (which compiles: numba on each worker, from the disk cache when it is warm). The
ratio dask / single process is the engine's overhead (scheduling, serialisation, the reduction)
minus what two processes gain; on a 2-core machine shared with other jobs expect it to be noisy.
"""
import argparse
import statistics
import time

import numpy as np

import adcompile


def loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def median_time(fn, repeat):
    fn()  # warm-up: compiles
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def data(rows, cols, chunk):
    import dask.array as da
    rng = da.random.RandomState(0)
    X = rng.normal(size=(rows, cols), chunks=(chunk, cols))
    y = (X[:, 0] + rng.normal(size=rows, chunks=chunk) > 0).astype(np.float64)
    return X, y


def main(argv=None):
    import distributed
    import adcompile.dask as adask
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--cols", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=250_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    w = np.linspace(-0.5, 0.5, args.cols)
    X, y = data(args.rows, args.cols, args.chunk)
    X_local, y_local = X.compute(), y.compute()
    print(f"data: {args.rows} x {args.cols} float64 ({X_local.nbytes / 1e6:.0f} MB), chunks of {args.chunk} rows")
    single_grad = adcompile.grad(loss)
    single = median_time(lambda: single_grad(w, X_local, y_local), args.repeat)
    print(f"single process, compiled gradient: {single * 1e3:8.1f} ms")
    reference = single_grad(w, X_local, y_local)
    del X_local, y_local
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster, distributed.Client(cluster) as client:
            Xp, yp = client.persist([X, y])
            distributed.wait([Xp, yp])
            sharded = adask.grad(loss, client=client)
            t = median_time(lambda: sharded(w, Xp, yp), args.repeat)
            error = np.max(np.abs(sharded(w, Xp, yp) - reference) / np.abs(reference))
            print(f"adcompile.dask, {workers} worker{'s' if workers > 1 else ' '}:     {t * 1e3:8.1f} ms  "
                  f"({t / single:.2f} x single process; max relative difference {error:.1e})")


if __name__ == "__main__":
    main()
