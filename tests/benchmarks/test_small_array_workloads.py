"""The small-array workloads of the benchmark suite (bundle adjustment, k-means' cost, the
determinant by cofactors: helper functions on 2- and 3-vectors in loops) compute the right
gradient: adcompile's, on both backends, against central differences at tiny size.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import adcompile  # noqa: E402
import workloads  # noqa: E402
from oracles import gradient_by_differences  # noqa: E402

OBJECTIVES = {"bundle_adjustment": ("reprojection_error", (0, 1)), "kmeans": ("kmeans_cost", (0, 1)),
              "determinant": ("sum_of_determinants", (0,))}


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_gradient_agrees_with_central_differences(name, backend):
    workload = workloads.load(name)
    function_name, wrt = OBJECTIVES[name]
    function = getattr(workload, function_name)
    data = workload.make_inputs("tiny")
    options = {"tiered": False} if backend == "numba" else {}  # numba's machine code, not the Python tier
    compiled = adcompile.compile(function, backend=backend, **options)
    assert np.isclose(compiled(*data), function(*data), rtol=1e-12)
    gradients = adcompile.grad(compiled, wrt=wrt)(*data)
    gradients = gradients if isinstance(gradients, tuple) else (gradients,)
    for k, gradient in zip(wrt, gradients):
        np.testing.assert_allclose(gradient, gradient_by_differences(function, data, k), rtol=1e-5, atol=1e-6)
