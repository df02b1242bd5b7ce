"""Module and Parameter semantics (PyTorch's): registration, traversal, state dicts, files,
modes, gradients bookkeeping, repr, and the errors for bad input. Nothing here compiles."""
import numpy as np
import pytest

import adcompile
from adcompile import Module, Parameter, nn
from adcompile.modules.state import StateDictError
from adcompile.modules.parameter import ParameterError


class Block(Module):
    def __init__(self, n):
        super().__init__()
        self.n = n
        self.weight = Parameter(np.arange(n * n, dtype=np.float64).reshape(n, n))
        self.register_parameter("bias", None)
        self.register_buffer("running", np.zeros(n))
        self.register_buffer("scratch", np.zeros(2), persistent=False)

    def forward(self, x):
        return x @ self.weight

    def extra_repr(self):
        return f"n={self.n}"


class Net(Module):
    def __init__(self):
        super().__init__()
        self.first = Block(2)
        self.scale = Parameter(np.ones(1))
        self.layers = nn.ModuleList([Block(2), Block(3)])

    def forward(self, x):
        return x


def test_parameter_holds_float_data_and_no_grad():
    p = Parameter(np.zeros((2, 3), dtype=np.float32))
    assert p.data.dtype == np.float32 and p.grad is None and p.requires_grad and p.shape == (2, 3)
    assert not Parameter(np.zeros(2), requires_grad=False).requires_grad


@pytest.mark.parametrize("bad", [np.arange(3), np.array([True]), [1, 2], "x"])
def test_parameter_of_integers_or_objects_is_rejected(bad):
    with pytest.raises(ParameterError, match="float32 or float64"):
        Parameter(bad)


def test_parameter_data_never_changes_dtype_silently():
    p = Parameter(np.zeros(2))
    with pytest.raises(ParameterError, match="never changes dtype"):
        p.data = np.zeros(2, dtype=np.float32)
    assert p.data.dtype == np.float64


def test_parameter_entries_are_read_and_written_in_place_as_torch_under_no_grad():
    """``p[i] = v`` perturbs the data a compiled model reads (a finite difference by hand)."""
    model = nn.Linear(2, 1).compile("python")
    x = np.array([[1.0, 2.0]])
    before = float(model(x)[0, 0])
    saved = float(model.weight[0, 1])
    model.weight[0, 1] = saved + 0.5
    assert float(model(x)[0, 0]) == pytest.approx(before + 0.5 * 2.0)
    assert model.weight.data[0, 1] == saved + 0.5 and model.weight[0].shape == (2,)


def test_named_parameters_are_dotted_in_registration_order():
    net = Net()  # as PyTorch: a module's own parameters, then each submodule's in order
    assert [n for n, _ in net.named_parameters()] == ["scale", "first.weight", "layers.0.weight",
                                                      "layers.1.weight"]
    assert [n for n, _ in net.named_buffers()] == ["first.running", "first.scratch", "layers.0.running",
                                                   "layers.0.scratch", "layers.1.running", "layers.1.scratch"]
    assert [n for n, _ in net.named_children()] == ["first", "layers"]
    assert len(list(net.modules())) == 5
    assert len(list(net.parameters())) == 4


def test_shared_parameter_is_listed_once():
    net = Net()
    net.layers[1].weight = net.first.weight
    names = [n for n, _ in net.named_parameters()]
    assert names == ["scale", "first.weight", "layers.0.weight"]


def test_state_dict_round_trip_and_strict_errors():
    net, other = Net(), Net()
    for p in other.parameters():
        p.data[...] = 7.0
    state = other.state_dict()
    assert "first.scratch" not in state and "first.running" in state
    net.load_state_dict(state)
    assert all(np.all(p.data == 7.0) for p in net.parameters())
    bad = dict(state)
    bad.pop("scale")
    bad["extra"] = np.zeros(1)
    with pytest.raises(StateDictError, match='Missing key.*"scale".*\n.*Unexpected key.*"extra"'):
        net.load_state_dict(bad)
    result = net.load_state_dict(bad, strict=False)
    assert result.missing_keys == ["scale"] and result.unexpected_keys == ["extra"]


def test_wrong_shape_load_changes_nothing():
    net = Net()
    before = {k: v.copy() for k, v in net.state_dict().items()}
    state = {k: v + 1 for k, v in net.state_dict().items()}
    state["layers.1.weight"] = np.zeros((2, 2))
    with pytest.raises(StateDictError, match=r"size mismatch for layers.1.weight.*\(2, 2\).*\(3, 3\)"):
        net.load_state_dict(state)
    for key, value in net.state_dict().items():
        np.testing.assert_array_equal(value, before[key])  # nothing half-updated


def test_save_and_load_npz_without_pickle(tmp_path):
    net, fresh = Net(), Net()
    for p in net.parameters():
        p.data[...] = np.random.default_rng(0).normal(size=p.data.shape)
    path = tmp_path / "net.npz"
    net.save(path)
    fresh.load(path)
    for (name, a), (_, b) in zip(net.state_dict().items(), fresh.state_dict().items()):
        np.testing.assert_array_equal(a, b, err_msg=name)
    np.savez(tmp_path / "evil.npz", **{"scale": np.array([object()], dtype=object)})
    with pytest.raises(ValueError, match="pickle"):
        fresh.load(tmp_path / "evil.npz", strict=False)


def test_train_eval_zero_grad_requires_grad_apply():
    net = Net()
    assert net.training and net.first.training
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())
    for p in net.parameters():
        p.grad = np.ones_like(p.data)
    net.zero_grad(set_to_none=False)
    assert all(np.all(p.grad == 0) for p in net.parameters())
    net.zero_grad()
    assert all(p.grad is None for p in net.parameters())
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    seen = []
    net.apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["Block", "Block", "Block", "ModuleList", "Net"]


def test_repr_is_pytorch_nested_format():
    text = repr(Net())
    assert text == ("Net(\n  (first): Block(n=2)\n  (layers): ModuleList(\n    (0): Block(n=2)\n"
                    "    (1): Block(n=3)\n  )\n)")
    assert repr(nn.Linear(3, 2)) == "Linear(in_features=3, out_features=2, bias=True)"


def test_assigning_before_init_is_a_clear_error():
    class Forgot(Module):
        def __init__(self):
            self.w = Parameter(np.zeros(1))

    with pytest.raises(adcompile.AdCompileError, match="super\\(\\).__init__\\(\\)"):
        Forgot()


def test_sequential_indexing_and_length():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[1], nn.ReLU) and isinstance(seq[-1], nn.Linear)
    assert len(seq[:2]) == 2
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_init_functions_are_seeded_and_in_place():
    a, b = Parameter(np.zeros((4, 5))), Parameter(np.zeros((4, 5)))
    adcompile.modules.init.xavier_uniform_(a, generator=np.random.default_rng(3))
    adcompile.modules.init.xavier_uniform_(b, generator=np.random.default_rng(3))
    np.testing.assert_array_equal(a.data, b.data)
    assert np.abs(a.data).max() <= np.sqrt(6 / 9)
    adcompile.modules.init.kaiming_uniform_(a, a=np.sqrt(5), generator=np.random.default_rng(1))
    assert np.abs(a.data).max() <= 1 / np.sqrt(5) and np.abs(a.data).max() > 0.3
    adcompile.modules.init.zeros_(a)
    assert not a.data.any()
    adcompile.modules.init.normal_(b, 1.0, 0.0)
    assert np.all(b.data == 1.0)
