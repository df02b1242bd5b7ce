"""Issue 10's bad input, each an AdCompileError (or PyTorch's error type) naming the problem,
with nothing half-updated: integer Parameters, a non-scalar loss given to backward, a
wrong-shape or wrong-type load_state_dict, optimizers without parameters (or holding none of
the model's), and a Module attribute compiled code cannot read."""
import numpy as np
import pytest

import adcompile
from adcompile import Module, Parameter, nn
from adcompile.errors import AdCompileError, CallError, TypeMismatchError
from adcompile.modules.state import StateDictError
from adcompile.optim.optimizer import OptimizerError
from adcompile.modules.parameter import ParameterError

X = np.random.default_rng(0).normal(size=(4, 3))
Y = np.array([0, 1, 1, 0])


def make_model():
    adcompile.modules.init.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 2)).compile("python")


def snapshot(model):
    return {name: value.copy() for name, value in model.state_dict().items()}


def assert_unchanged(model, before):
    after = model.state_dict()
    assert list(after) == list(before)
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value, err_msg=name)


def loss_fn(model, x, y):
    return nn.functional.cross_entropy(model(x), y)


def test_integer_parameters_are_rejected_and_the_model_keeps_its_own():
    model = make_model()
    before = snapshot(model)
    for bad in (np.arange(2), np.ones(2, dtype=np.int32), np.array([True, False])):
        with pytest.raises(ParameterError, match=r"float32 or float64.*astype"):
            model[0].bias = Parameter(bad)
        with pytest.raises(ParameterError, match="float32 or float64"):
            model[0].bias.data = bad
    assert isinstance(ParameterError("x"), (AdCompileError, TypeError))
    assert_unchanged(model, before)
    assert model[0].bias.data.dtype == np.float64


def test_a_non_scalar_loss_to_backward_leaves_accumulated_gradients_alone():
    model = make_model()
    adcompile.backward(loss_fn, model, X, Y)
    grads = {name: p.grad.copy() for name, p in model.named_parameters()}

    def outputs(model, x, y):
        return model(x)

    def two_losses(model, x, y):
        return loss_fn(model, x, y), loss_fn(model, x, y)

    for bad in (outputs, two_losses):
        with pytest.raises(CallError, match="must return one float scalar"):
            adcompile.backward(bad, model, X, Y)
        for name, p in model.named_parameters():
            np.testing.assert_array_equal(p.grad, grads[name], err_msg=name)


def test_load_state_dict_with_a_wrong_shape_or_type_changes_nothing():
    model = make_model()
    before = snapshot(model)
    state = {name: value + 1.0 for name, value in before.items()}
    state["0.bias"] = np.zeros(5)
    with pytest.raises(StateDictError, match=r"size mismatch for 0\.bias.*\(5,\).*\(2,\)"):
        model.load_state_dict(state)
    assert_unchanged(model, before)
    state["0.bias"] = np.array(["a", "b"])
    with pytest.raises(StateDictError, match=r"type mismatch for 0\.bias"):
        model.load_state_dict(state)
    assert_unchanged(model, before)
    assert isinstance(StateDictError("x"), RuntimeError)  # PyTorch raises RuntimeError


def test_optimizers_without_the_models_parameters():
    with pytest.raises(OptimizerError, match="empty parameter list"):
        adcompile.optim.Adam([], lr=0.1)
    assert isinstance(OptimizerError("x"), ValueError)  # PyTorch raises ValueError
    model = make_model()
    before = snapshot(model)
    other = adcompile.optim.SGD([Parameter(np.ones(2))], lr=0.1)
    with pytest.raises(CallError, match="no parameter of the model is both trainable"):
        adcompile.train_step(loss_fn, model, other)(X, Y)
    with pytest.raises(CallError, match="no parameter of the model is both trainable"):
        adcompile.fit(loss_fn, model, other, X, Y, epochs=1, batch_size=2, progress=False)
    assert_unchanged(model, before)


class HoldsDict(Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)
        self.table = {"scale": 2.0}

    def forward(self, x):
        return self.linear(x) * self.table


def test_an_unreadable_attribute_fails_the_training_step_before_any_update():
    adcompile.modules.init.manual_seed(1)
    model = HoldsDict().compile("python")
    before = snapshot(model)
    optimizer = adcompile.optim.Adam(model.parameters(), lr=0.1)
    with pytest.raises(TypeMismatchError) as info:
        adcompile.train_step(loss_fn, model, optimizer)(X, Y)
    message = str(info.value)
    assert "self.table" in message and "dict" in message and "compiled forward code cannot read" in message
    assert "return self.linear(x) * self.table" in message  # at the user's line
    assert_unchanged(model, before)
    assert all(p.grad is None for p in model.parameters())
    for state in optimizer.state_dict()["state"].values():  # no step taken: as a fresh optimizer's
        assert all(not np.any(value) for value in state.values()), state
    with pytest.raises(TypeMismatchError, match="self.table"):
        adcompile.backward(loss_fn, model, X, Y)
    assert all(p.grad is None for p in model.parameters())
