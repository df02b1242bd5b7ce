"""Cost of the zero-safe derivative rules (ir/primitives/, runtime/nonfinite.py) on 1e6 elements.

Times the numba-compiled gradient of functions whose rules use ``div_nz``/``mul_nz`` twice:
with the rules as they are, and with the plain products swapped in (``div_nz`` -> ``/``,
``mul_nz`` -> ``*``, what the rules were before). Prints the median times and their ratio.

    python benchmarks/bench_zero_safe.py
"""
import os
import sys
import tempfile
import time

import numpy as np

os.environ.setdefault("ADCOMPILE_CACHE_DIR", os.path.join(tempfile.gettempdir(), "adcompile_bench_zero_safe"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import adcompile  # noqa: E402
from adcompile.ir import builder  # noqa: E402


def sqrt_log_div(x, y):
    return np.sum(np.sqrt(x * x + 1.0) + np.log(y) + x / y)


def where_sqrt(x, y):
    return np.sum(np.where(x > 0.5, np.sqrt(x), 0.0) * y)


def softplus_exp(x, y):
    return np.sum(np.log1p(np.exp(-x * y)))


CASES = [sqrt_log_div, where_sqrt, softplus_exp]


def median_times(fns, args, rounds=7, calls=10):
    """Median time per call of each function, measured in alternating rounds (the machine is
    shared: alternating spreads any slow period over both)."""
    times = [[] for _ in fns]
    for fn in fns:
        fn(*args)
    for _ in range(rounds):
        for k, fn in enumerate(fns):
            for _ in range(calls):
                start = time.perf_counter()
                fn(*args)
                times[k].append(time.perf_counter() - start)
    return [float(np.median(t)) for t in times]


class _PlainProducts:
    """Within the block, rules emit ``g / d`` and ``g * d`` instead of the zero-safe products."""

    def __enter__(self):
        self._call = builder.Builder.call

        def call(b, prim, *args, **params):
            if prim == "div_nz":
                return b.div(*args)
            if prim == "mul_nz":
                return b.mul(*args)
            return self._call(b, prim, *args, **params)
        builder.Builder.call = call

    def __exit__(self, *exc):
        builder.Builder.call = self._call


def main(n=10**6):
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0.1, 2.0, n), rng.uniform(0.1, 2.0, n)
    print(f"gradient wrt (x, y), n = {n}, numba, median of 70 calls in alternating rounds")
    for case in CASES:
        safe_fn = adcompile.grad(adcompile.compile(case), wrt=(0, 1))
        with _PlainProducts():
            plain_fn = adcompile.grad(adcompile.compile(case), wrt=(0, 1))
            plain_fn(x, y)  # generated and compiled inside the block
        safe, plain = median_times([safe_fn, plain_fn], (x, y))
        print(f"{case.__name__:14s} zero-safe {safe * 1e3:7.2f} ms   plain {plain * 1e3:7.2f} ms   "
              f"ratio {safe / plain:.2f}")

if __name__ == "__main__":
    main()
