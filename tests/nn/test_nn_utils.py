"""``nn.utils.clip_grad_norm_`` / ``clip_grad_value_`` against their formulas and torch,
``Parameter.numel`` / ``detach``, and ``Module.float`` / ``double`` / ``to``."""
import numpy as np
import pytest

import adcompile
from adcompile import nn
from adcompile.errors import AdCompileError
from adcompile.nn.utils import NonFiniteNormError, clip_grad_norm_, clip_grad_value_

RNG = np.random.default_rng(3)
SHAPES = [(3, 4), (4,), (2, 2, 2)]


def parameters_with_grads(scale=1.0, dtype=np.float64):
    params = []
    for shape in SHAPES:
        param = adcompile.Parameter(np.zeros(shape, dtype=dtype))
        param.grad = (scale * RNG.normal(size=shape)).astype(dtype)
        params.append(param)
    return params


def norm_by_hand(grads, p):
    entries = np.concatenate([g.ravel() for g in grads])
    if p == np.inf:
        return np.max(np.abs(entries))
    return np.sum(np.abs(entries) ** p) ** (1 / p)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, np.inf])
def test_clip_grad_norm_scales_to_max_norm_and_returns_the_norm_before(norm_type):
    params = parameters_with_grads(scale=5.0)
    before = [p.grad.copy() for p in params]
    total = clip_grad_norm_(params, max_norm=0.5, norm_type=norm_type)
    assert total == pytest.approx(norm_by_hand(before, norm_type), rel=1e-12)
    factor = 0.5 / (total + 1e-6)
    for param, grad in zip(params, before):
        np.testing.assert_allclose(param.grad, grad * factor, rtol=1e-12)
    assert norm_by_hand([p.grad for p in params], norm_type) == pytest.approx(0.5, rel=1e-5)


def test_clip_grad_norm_leaves_small_gradients_alone_and_skips_missing_ones():
    params = parameters_with_grads(scale=1e-3)
    params.append(adcompile.Parameter(np.ones(2)))  # no .grad
    before = [p.grad.copy() for p in params[:-1]]
    clip_grad_norm_(params, max_norm=10.0)
    for param, grad in zip(params, before):
        np.testing.assert_array_equal(param.grad, grad)
    assert params[-1].grad is None
    assert clip_grad_norm_([adcompile.Parameter(np.ones(2))], 1.0) == 0.0
    single = parameters_with_grads(scale=10.0)[0]  # one Parameter, not a list
    clip_grad_norm_(single, 1.0)
    assert np.linalg.norm(single.grad) == pytest.approx(1.0, rel=1e-5)


def test_clip_grad_norm_non_finite():
    params = parameters_with_grads()
    params[1].grad[0] = np.nan
    with pytest.raises(NonFiniteNormError, match="error_if_nonfinite=False"):
        clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    assert np.isnan(clip_grad_norm_(params, 1.0))
    with pytest.raises(AdCompileError, match="takes adcompile.Parameters"):
        clip_grad_norm_([np.zeros(3)], 1.0)


def test_clip_grad_value_clips_each_entry():
    params = parameters_with_grads(scale=3.0)
    before = [p.grad.copy() for p in params]
    clip_grad_value_(params, 1.5)
    for param, grad in zip(params, before):
        np.testing.assert_array_equal(param.grad, np.minimum(np.maximum(grad, -1.5), 1.5))
    assert any(np.any(np.abs(g) > 1.5) for g in before)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf")])
def test_clipping_matches_torch(norm_type):
    torch = pytest.importorskip("torch")
    params = parameters_with_grads(scale=4.0)
    tensors = []
    for param in params:
        tensor = torch.nn.Parameter(torch.tensor(param.data))
        tensor.grad = torch.tensor(param.grad)
        tensors.append(tensor)
    ours = clip_grad_norm_(params, 0.7, norm_type=norm_type)
    theirs = torch.nn.utils.clip_grad_norm_(tensors, 0.7, norm_type=norm_type)
    assert ours == pytest.approx(float(theirs), rel=1e-13)
    for param, tensor in zip(params, tensors):
        np.testing.assert_allclose(param.grad, tensor.grad.numpy(), rtol=1e-13)
    for param, tensor in zip(params, tensors):  # the same gradients, to the bit
        tensor.grad = torch.tensor(param.grad)
    clip_grad_value_(params, 0.05)
    torch.nn.utils.clip_grad_value_(tensors, 0.05)
    for param, tensor in zip(params, tensors):
        np.testing.assert_array_equal(param.grad, tensor.grad.numpy())


def test_float32_gradients_give_a_float32_norm():
    params = parameters_with_grads(scale=5.0, dtype=np.float32)
    total = clip_grad_norm_(params, 1.0)
    assert total.dtype == np.float32 and all(p.grad.dtype == np.float32 for p in params)


def test_parameter_numel_and_detach():
    weight = adcompile.Parameter(np.arange(6.0).reshape(2, 3))
    assert weight.numel() == 6
    model = nn.Linear(4, 3)
    assert sum(p.numel() for p in model.parameters()) == 4 * 3 + 3
    detached = weight.detach()
    assert isinstance(detached, np.ndarray) and not isinstance(detached, adcompile.Parameter)
    detached[0, 0] = 10.0  # shares memory, as torch's detach shares storage
    assert weight.data[0, 0] == 10.0


def test_module_dtype_conversion_returns_self_and_converts_parameters_and_buffers():
    model = nn.Sequential(nn.Linear(3, 2), nn.Tanh())
    model[0].register_buffer("scale", np.ones(2))
    model[0].register_buffer("count", np.zeros(1, dtype=np.int64))
    model[0].weight.grad = np.ones((2, 3))
    assert model.float() is model
    assert {p.dtype for p in model.parameters()} == {np.dtype(np.float32)}
    assert model[0].scale.dtype == np.float32 and model[0].count.dtype == np.int64  # integer buffers stay
    assert model[0].weight.grad is None  # a gradient of the old dtype is dropped
    x = np.ones((1, 3), dtype=np.float32)
    assert model.compile("python")(x).dtype == np.float32
    assert model.double() is model and model[0].bias.dtype == np.float64
    assert model.to(np.float32) is model and model[0].weight.dtype == np.float32
    with pytest.raises(AdCompileError, match="float32 or float64"):
        model.to(np.int32)
