"""``fit`` on numba answers from its first epoch: while numba compiles the epoch program, whole
epochs run as its generated Python (``backend/tiers.py``), then as machine code; both update the
same parameters and optimizer state in place, so the run is the Python backend's run.

The suite runs untiered (``conftest.py``); this test turns tiers on and holds numba's compile
at a gate until it lets it go, so nothing depends on timing.
"""
import threading

import numpy as np
import pytest

import adcompile
from adcompile import nn
from adcompile.api import specialised
from adcompile.backend import tiers
import adcompile.nn.functional as F

RNG = np.random.default_rng(5)
X = RNG.normal(size=(40, 4))
Y = RNG.integers(0, 3, size=40)


def loss_fn(model, X, y):
    return F.cross_entropy(model(X), y)


def make(backend):
    adcompile.modules.init.manual_seed(2)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).compile(backend)
    optimizer = adcompile.optim.Adam(model.parameters(), lr=0.05)
    optimizer.backend = backend
    return model, optimizer


@pytest.fixture
def gated_tiers(monkeypatch):
    monkeypatch.setenv("ADCOMPILE_TIERED", "1")
    monkeypatch.setattr(tiers, "_tiered", {})
    monkeypatch.setattr(specialised, "loads_quickly", lambda source, name: False)
    gate = threading.Event()
    original = tiers.compile_for

    def gated_compile(dispatcher, args):
        gate.wait()
        original(dispatcher, args)
    monkeypatch.setattr(tiers, "compile_for", gated_compile)
    yield gate
    gate.set()


def epoch_program():
    (program,) = [tiered for (source, name, folder), tiered in tiers._tiered.items() if name == "fit_epoch"]
    return program


def test_fit_runs_whole_epochs_as_python_while_numba_compiles(gated_tiers):
    model, optimizer = make("numba")
    reference, reference_optimizer = make("python")
    losses = adcompile.fit(loss_fn, model, optimizer, X, Y, epochs=2, batch_size=8, progress=False)
    assert epoch_program().tier() == "python"
    expected = adcompile.fit(loss_fn, reference, reference_optimizer, X, Y, epochs=2, batch_size=8, progress=False)
    np.testing.assert_allclose(list(losses), list(expected), rtol=1e-12)
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        np.testing.assert_allclose(p.data, q.data, rtol=1e-12, atol=1e-14, err_msg=name)

    gated_tiers.set()
    assert epoch_program().tier(wait=True) == "numba"
    more = adcompile.fit(loss_fn, model, optimizer, X, Y, epochs=2, batch_size=8, progress=False, initial_epoch=2)
    assert epoch_program().tier() == "numba"
    expected = adcompile.fit(loss_fn, reference, reference_optimizer, X, Y, epochs=2, batch_size=8, progress=False,
                             initial_epoch=2)
    np.testing.assert_allclose(list(more), list(expected), rtol=1e-10)
    for (name, p), (_, q) in zip(model.named_parameters(), reference.named_parameters()):
        np.testing.assert_allclose(p.data, q.data, rtol=1e-10, atol=1e-12, err_msg=name)
