"""What compiled Module code keeps and when it compiles again: cached flat functions hold
their models weakly (a dropped model is collected), a call checks one version number that
assignments on the model's tree change (a plain attribute change recompiles; assignments on
unrelated modules do not even re-check), and copies of a called model work."""
import copy
import gc
import weakref

import numpy as np
import pytest

import adcompile
from adcompile import Module, Parameter, nn
import adcompile.module_compiler.flat_functions as flat_functions

X = np.random.default_rng(0).normal(size=(5, 3))
Y = np.array([0, 1, 1, 0, 1])


def loss_fn(model, x, y):
    return nn.functional.cross_entropy(model(x), y)


def test_a_dropped_model_is_collected_after_calls_gradients_and_training():
    adcompile.modules.init.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).compile("python")
    model(X)
    adcompile.grad(loss_fn)(model, X, Y)
    adcompile.hvp(loss_fn, (model, X, Y), ({"0.bias": np.ones(4)}, None, None))
    adcompile.backward(loss_fn, model, X, Y)
    optimizer = adcompile.optim.SGD(model.parameters(), lr=0.1)
    step = adcompile.train_step(loss_fn, model, optimizer)
    step(X, Y)
    alive = weakref.ref(model)
    cached = len(flat_functions._flat_functions)
    del model, optimizer, step
    gc.collect()
    assert alive() is None
    assert len(flat_functions._flat_functions) < cached  # its flat functions left the cache


class Scaled(Module):
    def __init__(self):
        super().__init__()
        self.w = Parameter(np.ones(3))
        self.power = 2
        self.inner = nn.Identity()

    def forward(self, x):
        return np.sum(self.w * self.inner(x) ** self.power)


@pytest.fixture
def counted(monkeypatch):
    """Counts of module_key computations and of FlatFunctions made."""
    counts = {"key": 0, "flat": 0}
    original_key, original_flat = flat_functions.module_key, flat_functions.FlatFunction.__init__

    def key(module):
        counts["key"] += 1
        return original_key(module)

    def init(self, *args, **kwargs):
        counts["flat"] += 1
        original_flat(self, *args, **kwargs)
    monkeypatch.setattr(flat_functions, "module_key", key)
    monkeypatch.setattr(flat_functions.FlatFunction, "__init__", init)
    return counts


def test_plain_attribute_change_recompiles_and_unrelated_assignments_do_not(counted):
    m = Scaled().compile("python")
    x = np.array([1.0, 2.0, 3.0])
    assert m(x) == 14.0
    built = dict(counted)
    other = Scaled()           # a new module elsewhere,
    other.power = 5            # assignments on it,
    nn.Linear(2, 2).bias = Parameter(np.zeros(2))
    assert m(x) == 14.0 and counted == built  # ...and m's call did not even recompute its key
    m.power = 3                # a compile-time constant of m: compiles again
    assert m(x) == 36.0 and counted["flat"] == built["flat"] + 1
    m.inner.label = "same"     # a change deep in the tree reaches the root: re-checked...
    assert m(x) == 36.0 and counted["flat"] == built["flat"] + 2
    m.power = 3                # ...and an assignment of the same value re-checks without compiling
    assert m(x) == 36.0 and counted["flat"] == built["flat"] + 2
    m.w.requires_grad_(False)  # a Parameter change reaches its modules
    keys = counted["key"]
    assert m(x) == 36.0 and counted["key"] == keys + 1


def test_a_list_attribute_changed_in_place_recompiles():
    class Powers(Module):
        def __init__(self):
            super().__init__()
            self.w = Parameter(np.ones(2))
            self.powers = [1, 2]

        def forward(self, x):
            return np.sum(self.w * x ** self.powers[1])

    m = Powers().compile("python")
    x = np.array([2.0, 3.0])
    assert m(x) == 13.0
    m.powers[1] = 3  # no assignment to an attribute: the key of a tree holding a list is compared
    assert m(x) == 35.0


def test_train_step_keeps_its_program_across_unrelated_assignments():
    adcompile.modules.init.manual_seed(1)
    model = nn.Sequential(nn.Linear(3, 2)).compile("python")
    step = adcompile.train_step(loss_fn, model, adcompile.optim.SGD(model.parameters(), lr=0.1))
    step(X, Y)
    program = step._program
    nn.Linear(3, 3).extra = 1
    step(X, Y)
    assert step._program is program
    model[0].note = "changed"
    step(X, Y)
    assert step._program is not program


def test_deepcopy_of_a_called_model_is_independent_and_tracked():
    m = Scaled().compile("python")
    x = np.array([1.0, 2.0, 3.0])
    assert m(x) == 14.0
    twin = copy.deepcopy(m)
    assert twin(x) == 14.0
    twin.w.data[...] = 2.0
    twin.inner.factor = 1  # a change in the copy's tree reaches the copy's root
    assert twin(x) == 28.0 and m(x) == 14.0
