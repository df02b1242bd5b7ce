"""The cost of the pytree boundary: a call with a dict of 4 small leaves against the same call
with the 4 leaves as flat arguments, for a compiled function and its gradient (numba backend,
tiny arrays, so that the time is the call's overhead, not the arithmetic). Median and minimum
of repeated calls after warm-up, interleaved so both variants see the same machine load. Run:
``python benchmarks/pytree_call_overhead.py``."""
import numpy as np

import adcompile
from bench_mlp_step import interleaved_times

REPEATS = 20000


@adcompile.compile(tiered=False)
def flat_loss(W1, b1, W2, b2):
    return np.sum(W1 * W1) + np.sum(b1) + np.sum(W2 * b2)


@adcompile.compile(tiered=False)
def tree_loss(params):
    return np.sum(params["W1"] * params["W1"]) + np.sum(params["b1"]) + np.sum(params["W2"] * params["b2"])


def main():
    rng = np.random.default_rng(0)
    params = {"W1": rng.normal(size=(2, 2)), "b1": rng.normal(size=2), "W2": rng.normal(size=2), "b2": 0.5}
    leaves = [params[name] for name in ("W1", "b1", "W2", "b2")]
    flat_grad = adcompile.grad(flat_loss, wrt=(0, 1, 2, 3))
    tree_grad = adcompile.grad(tree_loss)
    calls = {
        "call, 4 flat arguments": lambda: flat_loss(*leaves),
        "call, a dict of 4 leaves": lambda: tree_loss(params),
        "grad, 4 flat arguments": lambda: flat_grad(*leaves),
        "grad, a dict of 4 leaves": lambda: tree_grad(params),
    }
    for name, (median, minimum) in interleaved_times(calls, REPEATS).items():
        print(f"{name:28s} median {1e6 * median:7.1f} us   min {1e6 * minimum:7.1f} us")


if __name__ == "__main__":
    main()
