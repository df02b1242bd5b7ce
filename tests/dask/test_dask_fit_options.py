"""``adcompile.dask.fit``'s ``drop_last`` and gradient clipping against ``adcompile.fit`` with the
same options, on a real LocalCluster (the ``client`` fixture of conftest.py, two workers) with
uneven blocks; every wait is bounded. The data set (30 rows) is not a multiple of the batch
size (8), and the clipping bounds are small enough to change every run (checked against the
unclipped run). Skipped when dask or distributed is not installed.
"""
import math
import sys

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
pytest.importorskip("distributed")
import cloudpickle  # noqa: E402  (a dependency of distributed)

import adcompile  # noqa: E402
import adcompile.dask as adask  # noqa: E402
from adcompile.dask import training  # noqa: E402
from adcompile import nn  # noqa: E402
from adcompile.errors import CallError  # noqa: E402
import adcompile.nn.functional as F  # noqa: E402
from adcompile.training.clipping import GradClipping  # noqa: E402
from dask_helpers import TIMEOUT, bounded, close  # noqa: E402

# the loss runs on the workers: ship this module by value (tests/ is not a package)
cloudpickle.register_pickle_by_value(sys.modules[__name__])

RNG = np.random.default_rng(1)
X = RNG.normal(size=(30, 4)) * 3.0
Y = RNG.integers(0, 3, size=30)
CHUNKS = (7, 11, 12)  # uneven blocks: minibatches span them
BATCH_SIZE = 8  # 30 = 3 * 8 + 6: drop_last leaves out 6 rows per epoch
EPOCHS = 2


def loss_fn(model, X, y):
    return F.cross_entropy(model(X), y)


def make():
    adcompile.modules.init.manual_seed(4)
    model = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 3)).compile("python")
    return model, adcompile.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)


def sharded(chunks=CHUNKS):
    return da.from_array(X, chunks=(chunks, -1)), da.from_array(Y, chunks=(chunks,))


def single_process(**options):
    """(model, optimizer, History) of adcompile.fit with ``options``."""
    model, opt = make()
    history = adcompile.fit(loss_fn, model, opt, X, Y, epochs=EPOCHS, batch_size=BATCH_SIZE, progress=False,
                            **options)
    return model, opt, history


def on_dask(client, chunks=CHUNKS, **options):
    """(model, optimizer, History) of adcompile.dask.fit with ``options``."""
    model, opt = make()
    history = bounded(adask.fit, loss_fn, model, opt, *sharded(chunks), epochs=EPOCHS, batch_size=BATCH_SIZE,
                      client=client, timeout=TIMEOUT, **options)
    return model, opt, history


def assert_same_run(run, expected, rtol=1e-10):
    model, opt, history = run
    expected_model, expected_opt, expected_history = expected
    close(list(history), list(expected_history), rtol=rtol)
    close(dict(model.named_parameters()), dict(expected_model.named_parameters()), rtol=rtol)
    for p, q in zip(model.parameters(), expected_model.parameters()):
        close(opt.state[p]["step"], expected_opt.state[q]["step"], rtol=0)


def assert_different_parameters(a, b):
    assert any(not np.allclose(p.data, q.data, rtol=1e-6, atol=0) for p, q in zip(a.parameters(), b.parameters()))


def steps_taken(model, opt):
    return {float(opt.state[p]["step"][0]) for p in model.parameters()}


# ------------------------------------------------------------------ drop_last
def test_drop_last_equals_fit(client):
    expected = single_process(drop_last=True)
    run = on_dask(client, drop_last=True)
    assert_same_run(run, expected)
    assert steps_taken(*run[:2]) == {EPOCHS * (len(X) // BATCH_SIZE)}
    assert_different_parameters(run[0], single_process()[0])  # the last batches were left out


def test_drop_last_with_local_sgd_takes_fits_steps(client):
    """sync_every=2 on two workers: each epoch's 3 full batches (rounds of 2 and 1), not 4."""
    model, opt, history = on_dask(client, drop_last=True, sync_every=2)
    assert len(history) == EPOCHS
    assert steps_taken(model, opt) == {EPOCHS * (len(X) // BATCH_SIZE)}
    # one block: one learner, plain minibatch SGD on fit's batches
    assert_same_run(on_dask(client, chunks=(len(X),), drop_last=True, sync_every=2), single_process(drop_last=True))


@pytest.mark.parametrize("sync_every", [1, 2])
def test_drop_last_without_a_full_batch_is_fits_error(sync_every):
    model, opt = make()
    with pytest.raises(CallError) as expected:
        adcompile.fit(loss_fn, model, opt, X, Y, batch_size=40, drop_last=True, progress=False)
    with pytest.raises(CallError) as raised:
        adask.fit(loss_fn, model, opt, *sharded(), batch_size=40, drop_last=True, sync_every=sync_every)
    assert str(raised.value) == str(expected.value).replace("adcompile.fit", "adcompile.dask.fit")
    assert "leaves no batch" in str(raised.value)


# ------------------------------------------------------------------ gradient clipping
CLIPPINGS = {
    "norm 2": dict(clip_grad_norm=0.3),
    "norm inf": dict(clip_grad_norm=0.05, clip_norm_type=math.inf),
    "norm 3": dict(clip_grad_norm=0.2, clip_norm_type=3),
    "value": dict(clip_grad_value=0.02),
    "value and norm": dict(clip_grad_value=0.05, clip_grad_norm=0.1),
}


@pytest.mark.parametrize("name", sorted(CLIPPINGS))
def test_clipping_of_the_summed_gradient_equals_fit(client, name):
    """sync_every=1: the minibatch gradient summed over the blocks is clipped as fit clips it."""
    options = CLIPPINGS[name]
    expected = single_process(**options)
    run = on_dask(client, **options)
    assert_same_run(run, expected)
    assert_different_parameters(run[0], single_process()[0])  # the clipping did clip


def test_local_sgd_clips_each_learners_step(client):
    """One learner (one block) is fit with the same clipping. Two learners with one step per
    round (without clipping, the synchronous step: SGD's update is linear) each clip the gradient
    of their own rows, which is not fit's clipping of the whole minibatch's gradient."""
    expected = single_process(clip_grad_norm=0.3)
    assert_same_run(on_dask(client, chunks=(len(X),), sync_every=2, clip_grad_norm=0.3), expected)
    runs = []
    for clipping in (GradClipping(max_norm=0.3), GradClipping()):
        model, opt = make()
        bounded(training._fit, loss_fn, model, opt, *sharded(), EPOCHS, BATCH_SIZE, client, 1, True, True, 0, (), 0,
                TIMEOUT, clipping=clipping)
        runs.append(model)
    assert_different_parameters(runs[0], expected[0])
    assert_different_parameters(runs[0], runs[1])


BAD_OPTIONS = {
    "negative max_norm": dict(clip_grad_norm=-1.0),
    "zero clip value": dict(clip_grad_value=0.0),
    "infinite max_norm": dict(clip_grad_norm=math.inf),
    "text clip value": dict(clip_grad_value="big"),
    "negative norm type": dict(clip_grad_norm=1.0, clip_norm_type=-2.0),
}


@pytest.mark.parametrize("name", sorted(BAD_OPTIONS))
def test_bad_clipping_options_are_fits_errors(name):
    options = BAD_OPTIONS[name]
    model, opt = make()
    with pytest.raises(CallError) as expected:
        adcompile.fit(loss_fn, model, opt, X, Y, progress=False, **options)
    with pytest.raises(CallError) as raised:
        adask.fit(loss_fn, model, opt, *sharded(), **options)
    assert str(raised.value) == str(expected.value)
    assert "clip" in str(raised.value)
