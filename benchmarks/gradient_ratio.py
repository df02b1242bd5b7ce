"""The steady-state cost of a gradient over its own compiled forward, per workload.

    python benchmarks/gradient_ratio.py [--rounds 60] [--size full|tiny] [--peer jax] [NAME ...]

For each workload (default: the small-array objectives bundle_adjustment, kmeans, determinant;
full size, numba, warm, one thread), adcompile's forward and gradient calls are timed in
interleaved rounds (wall time of one call, the minimum over the rounds: the least disturbed
run on a shared machine) and the ratio printed. ``--peer jax`` times JAX's ``jit`` forward
and gradient the same way in a process of their own: a peer's calls interleaved with ours
change the cost of ours (the allocator returns memory between them, and the next large
allocation faults its pages in again), so each side is measured undisturbed.
"""
import single_thread  # noqa: F401  (first: pins every library to one thread before it loads)

import argparse
import subprocess
import sys
import time

import workloads

DEFAULT = ("bundle_adjustment", "kmeans", "determinant")


def _minimum_times(calls, rounds):
    for call in calls:
        call()
        call()
    best = [float("inf")] * len(calls)
    for _ in range(rounds):
        for k, call in enumerate(calls):
            start = time.perf_counter()
            call()
            best[k] = min(best[k], time.perf_counter() - start)
    return best


def _implementation(name, peer, size):
    module = workloads.load(name)
    data = module.make_inputs(size)
    if peer is None:
        return module.adcompile_version(data)
    import jax
    jax.config.update("jax_enable_x64", True)
    return module.jax_version(data, jax)


def measure(name, rounds, peer=None, size="full"):
    """(forward seconds, gradient seconds) of ``name``, adcompile's or ``peer``'s."""
    implementation = _implementation(name, peer, size)
    return _minimum_times([implementation.forward, implementation.gradient], rounds)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(DEFAULT))
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--size", choices=["full", "tiny"], default="full")
    parser.add_argument("--peer", choices=["jax"], default=None)
    parser.add_argument("--only-peer", action="store_true", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.only_peer:  # the peer's process (see the module's docstring)
        forward, gradient = measure(opts.names[0], opts.rounds, opts.peer, opts.size)
        print(forward, gradient)
        return
    print(f"{'workload':20s} {'forward ms':>11s} {'gradient ms':>12s} {'ratio':>6s}"
          + (f" {opts.peer + ' gradient ms':>16s} {opts.peer + '/ours':>9s}" if opts.peer else ""))
    for name in opts.names:
        forward, gradient = measure(name, opts.rounds, size=opts.size)
        line = f"{name:20s} {1e3 * forward:11.3f} {1e3 * gradient:12.3f} {gradient / forward:6.2f}"
        if opts.peer:
            output = subprocess.run([sys.executable, __file__, name, "--rounds", str(opts.rounds), "--size", opts.size,
                                     "--peer", opts.peer, "--only-peer"], capture_output=True, text=True, check=True)
            peer_gradient = float(output.stdout.split()[-1])
            line += f" {1e3 * peer_gradient:16.3f} {peer_gradient / gradient:9.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
