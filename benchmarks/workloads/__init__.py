"""The benchmark workloads, one module each, in the order the results table lists them.

Every module defines ``NAME``, ``TITLE``, ``SIZES`` (the parameters at ``tiny`` size for CI
and at ``full`` size for the measured table), ``NOTE`` (what its forward and gradient columns time), ``make_inputs(size)``
and builders ``adcompile_version(data)``, ``numpy_version(data)``, ``numba_version(data)``,
``jax_version(data, jax)``, ``torch_version(data, torch)``, ``autograd_version(data, autograd)``
(each optional except adcompile's) returning a ``harness.Implementation``.
"""
import importlib

NAMES = ("rosenbrock", "logistic", "hessian", "hvp", "gmm", "mlp", "spring", "rk4",
         "bundle_adjustment", "kmeans", "determinant")


def load(name):
    return importlib.import_module(f"workloads.{name}")
