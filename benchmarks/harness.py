"""Timing and agreement checks shared by every workload.

An ``Implementation`` is one way of computing a workload (adcompile, numpy or numba by hand,
a peer): a forward call and a gradient call with the inputs already bound. ``measure`` checks
that its results agree with adcompile's before timing anything, then times the median of
repeated calls after warm-up calls (compilation excluded).
"""
import os
import statistics
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

import adcompile

# The builders a workload module may define, by implementation key; peers need their module.
BUILDERS = (("adcompile", None), ("numpy", None), ("numba", None),
            ("jax", "jax"), ("torch", "torch"), ("autograd", "autograd"))


# "python" runs adcompile's generated code without numba: CI's quick check of the suite.
BACKEND_VARIABLE = "BENCH_ADCOMPILE_BACKEND"
# Timed calls must run numba's machine code, so the first call waits for it (no tiered execution);
# first_call.py sets None: the first call as a user sees it (tiered unless ADCOMPILE_TIERED=0).
TIERED = False
# numba's bounds checks (adcompile's default); benchmarks/boundscheck.py times the workloads without
BOUNDSCHECK = True


def compile_with_adcompile(function):
    """``adcompile.compile(function)`` with the backend the run asked for (numba by default)."""
    return adcompile.compile(function, backend=os.environ.get(BACKEND_VARIABLE, "numba"), tiered=TIERED,
                             boundscheck=BOUNDSCHECK)


class DisagreementError(AssertionError):
    """Two implementations of one workload computed different results: nothing is timed."""


@dataclass
class Implementation:
    """One implementation of a workload, inputs bound: ``forward()`` and ``gradient()``.

    ``result`` turns what ``gradient()`` returned (or, for a training step that updates its
    parameters in place, the state after the first call) into numpy arrays to compare."""
    key: str
    label: str
    forward: Callable[[], Any]
    gradient: Callable[[], Any]
    result: Optional[Callable[[Any], Any]] = None


@dataclass
class Timing:
    forward_s: float
    gradient_s: float


def flat_numpy(value):
    """A float64 vector of every number in a (nested tuple/list of) array(s) or tensors."""
    if isinstance(value, (tuple, list)):
        return np.concatenate([flat_numpy(v) for v in value]) if value else np.zeros(0)
    if hasattr(value, "detach"):  # a torch tensor
        value = value.detach().numpy()
    return np.asarray(value, dtype=np.float64).ravel()


def first_gradient_result(implementation):
    """The comparable result of the implementation's first gradient call."""
    value = implementation.gradient()
    if implementation.result is not None:
        value = implementation.result(value)
    return flat_numpy(value)


def check_agreement(reference, candidate, label, workload, rtol=1e-6, atol=1e-9):
    """Raise ``DisagreementError`` unless ``candidate`` equals adcompile's ``reference``."""
    if reference.shape != candidate.shape or not np.allclose(candidate, reference, rtol=rtol, atol=atol):
        worst = np.max(np.abs(candidate - reference)) if reference.shape == candidate.shape else "shape"
        raise DisagreementError(f"{workload}: {label} disagrees with adcompile (largest difference {worst})")


SLOW_CALL_S = 5.0  # a call slower than this (autograd's 10,000-step loop) is timed once after warm-up


def median_seconds(call, budget_s, warmup=2, min_repeats=5, max_repeats=200):
    """Median time of ``call()`` after ``warmup`` calls, repeated until ``budget_s`` is spent
    (a call slower than the whole budget: one warm-up call and 3 timed calls; slower than
    ``SLOW_CALL_S``: one warm-up call and one timed call)."""
    start = time.perf_counter()
    call()
    first_s = time.perf_counter() - start
    if first_s > budget_s:
        warmup, min_repeats = 1, (1 if first_s > SLOW_CALL_S else 3)
    for _ in range(warmup - 1):
        call()
    times = []
    spent = 0.0
    while len(times) < min_repeats or (spent < budget_s and len(times) < max_repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
        spent += times[-1]
    return statistics.median(times)


def time_implementation(implementation, budget_s):
    return Timing(median_seconds(implementation.forward, budget_s),
                  median_seconds(implementation.gradient, budget_s))


def build_implementations(workload, data, peers, only_key=None):
    """The workload's implementations for which the peer is installed, adcompile first."""
    built = []
    for key, peer_name in BUILDERS:
        builder = getattr(workload, f"{key}_version", None)
        if builder is None or (only_key is not None and key != only_key):
            continue
        if peer_name is None:
            built.append(builder(data))
        elif getattr(peers, peer_name) is not None:
            built.append(builder(data, getattr(peers, peer_name)))
    return built
