"""``gradcheck`` of a function of a dict argument: each leaf checked, a mismatch named by its path."""
import numpy as np
import pytest

import adcompile
from adcompile.checks.numeric import GradcheckError


def layer(params, x):
    return np.sum(np.tanh(params["W"] @ x + params["b"]))


PARAMS = {"W": np.array([[0.3, -0.2, 0.5], [0.1, 0.4, -0.6]]), "b": np.array([0.1, 0.2])}
X = np.array([0.1, -0.2, 0.3])


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_gradcheck_checks_each_leaf_of_a_dict(backend):
    f = adcompile.compile(layer, backend=backend)
    assert adcompile.gradcheck(f, (PARAMS, X))
    assert adcompile.gradcheck(f, (PARAMS, X), wrt="params")


def test_a_mismatch_is_named_by_the_leaf_path():
    f = adcompile.compile(layer, backend="python")
    # a step this large makes the differences inexact: the check must fail, naming a leaf
    with pytest.raises(GradcheckError, match=r"argument 'params\['(W|b)'\]'"):
        adcompile.gradcheck(f, (PARAMS, X), wrt=0, eps=0.5, rtol=1e-12, atol=0.0)
