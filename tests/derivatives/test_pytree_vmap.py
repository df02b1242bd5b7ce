"""``vmap`` with pytree arguments: ``in_axes`` entries that are 0, None or a tree prefix of their
argument (JAX's rule), results and gradients in their structures with the batch axis in front
-- compared with the per-member calls (which the other tests check against differences)."""
import numpy as np
import pytest

import adcompile
from adcompile.errors import CallError
from oracles import assert_trees_close, tree_gradient_by_differences

BACKENDS = ["python", "numba"]
RNG = np.random.default_rng(9)
PARAMS = {"W": RNG.normal(size=(2, 3)), "b": RNG.normal(size=2)}
XS = RNG.normal(size=(4, 3))
BIASES = RNG.normal(size=(4, 2))


def energy(params, x):
    return np.sum(np.tanh(params["W"] @ x + params["b"]) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_over_data_with_shared_parameters(backend):
    f = adcompile.compile(energy, backend=backend)
    values = adcompile.vmap(f, in_axes=(None, 0))(PARAMS, XS)
    np.testing.assert_allclose(values, [energy(PARAMS, x) for x in XS], rtol=1e-12)
    grads = adcompile.vmap(adcompile.grad(f), in_axes=(None, 0))(PARAMS, XS)
    assert grads["W"].shape == (4, 2, 3) and grads["b"].shape == (4, 2)
    for i, x in enumerate(XS):
        expected = tree_gradient_by_differences(energy, [PARAMS, x])
        assert_trees_close({k: v[i] for k, v in grads.items()}, expected, 1e-6, 1e-8, f"member {i}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_axes_as_a_tree_prefix(backend):
    f = adcompile.compile(energy, backend=backend)
    batched = {"W": PARAMS["W"], "b": BIASES}
    values = adcompile.vmap(f, in_axes=({"W": None, "b": 0}, 0))(batched, XS)
    expected = [energy({"W": PARAMS["W"], "b": BIASES[i]}, XS[i]) for i in range(4)]
    np.testing.assert_allclose(values, expected, rtol=1e-12)


def test_an_in_axes_tree_that_is_no_prefix_is_refused():
    f = adcompile.compile(energy, backend="python")
    with pytest.raises(CallError, match=r"in_axes for 'params' has the keys \('W',\), the argument \('W', 'b'\)"):
        adcompile.vmap(f, in_axes=({"W": None}, 0))(PARAMS, XS)
    with pytest.raises(CallError, match="in_axes for 'x' is a tree, but the argument is not"):
        adcompile.vmap(f, in_axes=(None, {"a": 0}))(PARAMS, XS)
