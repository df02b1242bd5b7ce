"""Loading a malformed state (a file of garbage bytes, a pickle, an ``.npy``, another
optimizer's or a Module's file, wrong shapes) raises StateDictError saying what is wrong and
leaves the model or optimizer as it was; optimizer hyperparameters are checked where PyTorch
checks them, at construction and at load, with a ValueError naming the parameter."""
import pickle

import numpy as np
import pytest

from adcompile import Parameter, nn
from adcompile.modules.state import StateDictError
from adcompile.optim import SGD, Adagrad, Adam, OptimizerError, RMSprop


def stepped(cls, **options):
    """An optimizer of ``cls`` over two parameters, one step taken (so it has state)."""
    params = [Parameter(np.ones((2, 3))), Parameter(np.zeros(3))]
    optimizer = cls(params, **options)
    optimizer.backend = "python"
    for param in params:
        param.grad = np.full(param.data.shape, 0.5)
    optimizer.step()
    return optimizer


def optimizer_state(optimizer):
    groups = [{key: value for key, value in group.items() if key != "params"}
              for group in optimizer.param_groups]
    states = {k: {name: value.copy() for name, value in optimizer.state[param].items()}
              for k, param in enumerate(optimizer.param_groups[0]["params"])}
    return groups, states


def assert_optimizer_unchanged(optimizer, before):
    groups, states = optimizer_state(optimizer)
    assert groups == before[0]
    for k, state in before[1].items():
        for name, value in state.items():
            np.testing.assert_array_equal(states[k][name], value, err_msg=f"{k}/{name}")


@pytest.fixture
def files(tmp_path):
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(bytes(range(256)) * 4)
    pickled = tmp_path / "pickled.npz"
    pickled.write_bytes(pickle.dumps({"weight": np.ones((3, 2))}))
    single = tmp_path / "single.npy"
    np.save(single, np.ones(3))
    model_file = tmp_path / "model.npz"
    nn.Linear(2, 3).save(model_file)
    sgd_file = tmp_path / "sgd.npz"
    stepped(SGD, lr=0.1, momentum=0.9).save(sgd_file)
    return {"garbage": garbage, "pickled": pickled, "single": single, "model": model_file, "sgd": sgd_file}


@pytest.mark.parametrize("which, words, unreadable", [
    ("garbage", "is not a state file written by Linear.save(path)", True),
    ("pickled", "never does (allow_pickle=False)", True),
    ("single", "a single array (an .npy file)", True),
    ("sgd", "this is an optimizer's state, not a Module's", False),
])
def test_a_module_refuses_a_file_that_is_not_its_state(files, which, words, unreadable):
    model = nn.Linear(2, 3)
    before = {name: value.copy() for name, value in model.state_dict().items()}
    with pytest.raises(StateDictError) as raised:
        model.load(files[which])
    assert words in str(raised.value)
    # a file numpy cannot read is also a ValueError, as np.load's error; a wrong state a RuntimeError
    assert isinstance(raised.value, ValueError) is unreadable
    for name, value in model.state_dict().items():
        np.testing.assert_array_equal(value, before[name])


@pytest.mark.parametrize("state, words", [
    ([np.ones((3, 2)), np.ones(3)], "expects a dict of arrays keyed by parameter names"),
    ({"weight": [[1.0, 2.0], [3.0]], "bias": np.ones(3)}, "weight is a list, not an array of numbers"),
    ({0: np.ones((3, 2))}, "not 0"),
])
def test_a_module_refuses_a_state_dict_that_is_no_state_dict(state, words):
    with pytest.raises(StateDictError, match=words):
        nn.Linear(2, 3).load_state_dict(state)


@pytest.mark.parametrize("which, words", [
    ("garbage", "is not a state file written by Adam.save(path)"),
    ("pickled", "allow_pickle=False"),
    ("single", "a single array (an .npy file)"),
    ("model", "it looks like a Module's file: load it with model.load(path)"),
    ("sgd", "that Adam does not take: was it saved by another optimizer?"),
])
def test_an_optimizer_refuses_a_file_that_is_not_its_state(files, which, words):
    optimizer = stepped(Adam, lr=0.01)
    before = optimizer_state(optimizer)
    with pytest.raises(StateDictError) as raised:
        optimizer.load(files[which])
    assert words in str(raised.value) and str(files[which]) in str(raised.value)
    assert isinstance(raised.value, OptimizerError) and isinstance(raised.value, ValueError)
    assert_optimizer_unchanged(optimizer, before)


def test_an_optimizer_refuses_a_state_of_other_shapes_or_options(tmp_path):
    optimizer = stepped(Adam, lr=0.01)
    before = optimizer_state(optimizer)
    saved = stepped(Adam, lr=0.02).state_dict()
    saved["state"][0]["exp_avg"] = np.ones((3, 2))
    with pytest.raises(StateDictError, match=r"'exp_avg' of parameter 0 has shape \(3, 2\), expected \(2, 3\)"):
        optimizer.load_state_dict(saved)
    saved = stepped(Adam, lr=0.02).state_dict()
    saved["param_groups"][0]["betas"] = (0.9, 1.5)
    with pytest.raises(StateDictError, match=r"saved parameter group 0: Invalid betas value: \(0.9, 1.5\)"):
        optimizer.load_state_dict(saved)
    with pytest.raises(StateDictError, match="has 'state' and 'param_groups' entries"):
        optimizer.load_state_dict(nn.Linear(2, 3).state_dict())
    assert_optimizer_unchanged(optimizer, before)
    saved = stepped(Adam, lr=0.02).state_dict()
    optimizer.load_state_dict(saved)  # a state that fits loads
    assert optimizer.param_groups[0]["lr"] == 0.02


@pytest.mark.parametrize("cls, options, words", [
    (SGD, {"lr": "fast"}, "Invalid learning rate: 'fast' (SGD's lr must be a number >= 0"),
    (Adam, {"lr": -0.1}, "Invalid learning rate: -0.1 (Adam's lr must be a number >= 0"),
    (Adam, {"lr": float("nan")}, "Invalid learning rate: nan"),
    (Adam, {"betas": (0.9, 1.0)}, "Invalid betas value: (0.9, 1.0) (Adam's betas must be a pair of numbers in [0, 1)"),
    (Adam, {"betas": 0.9}, "Invalid betas value: 0.9"),
    (Adam, {"eps": -1e-8}, "Invalid epsilon value: -1e-08"),
    (Adam, {"amsgrad": "yes"}, "Invalid amsgrad value: 'yes' (Adam's amsgrad must be True or False"),
    (SGD, {"lr": 0.1, "momentum": -0.5}, "Invalid momentum value: -0.5"),
    (SGD, {"lr": 0.1, "weight_decay": None}, "Invalid weight_decay value: None"),
    (RMSprop, {"alpha": -0.9}, "Invalid alpha value: -0.9"),
    (Adagrad, {"lr_decay": "slow"}, "Invalid lr_decay value: 'slow'"),
])
def test_hyperparameters_are_checked_at_construction(cls, options, words):
    with pytest.raises(OptimizerError) as raised:
        cls([Parameter(np.ones(2))], **options)
    assert words in str(raised.value)
    assert isinstance(raised.value, ValueError)  # as PyTorch's optimizers raise


def test_hyperparameters_of_an_added_group_are_checked():
    optimizer = SGD([Parameter(np.ones(2))], lr=0.1)
    with pytest.raises(OptimizerError, match="Invalid learning rate: '0.1'"):
        optimizer.add_param_group({"params": [Parameter(np.ones(2))], "lr": "0.1"})
    assert len(optimizer.param_groups) == 1


def test_an_option_set_to_a_non_number_later_is_named_at_the_step():
    param = Parameter(np.ones(2))
    optimizer = SGD([param], lr=0.1)
    optimizer.backend = "python"
    optimizer.param_groups[0]["lr"] = "fast"
    param.grad = np.ones(2)
    with pytest.raises(OptimizerError, match="Invalid learning rate: 'fast'"):
        optimizer.step()
    np.testing.assert_array_equal(param.data, 1.0)
