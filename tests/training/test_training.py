"""``train_step`` and ``fit`` against the PyTorch-style loop (``zero_grad``, ``backward``,
``step``) on the same batches, checkpoint and resume, Dropout's reproducible stream, and
the numba path."""
import numpy as np
import pytest

import adcompile
from adcompile import nn
from adcompile.errors import CallError
import adcompile.nn.functional as F

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 5))
Y = RNG.integers(0, 3, size=40)


def loss_fn(model, X, y):
    return F.cross_entropy(model(X), y)


def make(seed=0, backend="python", dropout=False):
    adcompile.modules.init.manual_seed(seed)
    layers = [nn.Linear(5, 8), nn.Tanh()] + ([nn.Dropout(0.3)] if dropout else []) + [nn.Linear(8, 3)]
    return nn.Sequential(*layers).compile(backend)


def optimizer(model, cls=adcompile.optim.Adam, backend="python", **options):
    opt = cls(model.parameters(), **(options or {"lr": 0.05}))
    opt.backend = backend
    return opt


def loop(model, opt, epochs, batch_size, seed=0, first_epoch=0):
    """The PyTorch-style loop over the batches fit visits."""
    for epoch in range(first_epoch, first_epoch + epochs):
        order = adcompile.batch_order(len(X), epoch, seed)
        for start in range(0, len(X), batch_size):
            batch = order[start:start + batch_size]
            opt.zero_grad()
            adcompile.backward(loss_fn, model, X[batch], Y[batch])
            opt.step()


def assert_same_parameters(a, b, rtol=1e-12):
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_allclose(p.data, q.data, rtol=rtol, atol=1e-14, err_msg=name)


@pytest.mark.parametrize("cls, options", [(adcompile.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True)),
                                          (adcompile.optim.Adam, dict(lr=0.05, amsgrad=True))])
def test_train_step_equals_backward_and_step(cls, options):
    a, b = make(), make()
    opt_a, opt_b = optimizer(a, cls, **options), optimizer(b, cls, **options)
    step = adcompile.train_step(loss_fn, a, opt_a)
    for _ in range(3):
        loss = step(X, Y)
        opt_b.zero_grad()
        expected = adcompile.backward(loss_fn, b, X, Y)
        opt_b.step()
        assert np.isclose(loss, expected, rtol=1e-12)
    assert_same_parameters(a, b)
    assert "def train_step(" in adcompile.source(step.program)


def test_fit_equals_the_step_by_step_loop_and_returns_epoch_losses():
    a, b = make(), make()
    opt_a, opt_b = optimizer(a), optimizer(b)
    history = adcompile.fit(loss_fn, a, opt_a, X, Y, epochs=3, batch_size=16, seed=7, progress=False)
    loop(b, opt_b, epochs=3, batch_size=16, seed=7)
    assert len(history) == 3 and history[-1] < history[0]
    assert_same_parameters(a, b)
    for param_a, param_b in zip(a.parameters(), b.parameters()):
        for name in ("exp_avg", "exp_avg_sq", "step"):
            np.testing.assert_allclose(opt_a.state[param_a][name], opt_b.state[param_b][name], rtol=1e-12)


def test_checkpoint_and_resume_equals_continuous_training(tmp_path):
    continuous = make()
    adcompile.fit(loss_fn, continuous, optimizer(continuous), X, Y, epochs=4, batch_size=8, progress=False)
    first = make()
    opt = optimizer(first)
    adcompile.fit(loss_fn, first, opt, X, Y, epochs=2, batch_size=8, progress=False)
    first.save(tmp_path / "model.npz")
    opt.save(tmp_path / "optimizer.npz")
    resumed = make(seed=99)  # fresh objects, other initial weights
    resumed_opt = optimizer(resumed, lr=0.5)
    resumed.load(tmp_path / "model.npz")
    resumed_opt.load(tmp_path / "optimizer.npz")
    adcompile.fit(loss_fn, resumed, resumed_opt, X, Y, epochs=2, batch_size=8, progress=False, initial_epoch=2)
    assert_same_parameters(resumed, continuous)


def test_dropout_stream_is_reproducible_and_honours_eval():
    a, b = make(dropout=True), make(dropout=True)
    np.testing.assert_array_equal(a(X), b(X))  # same seed, same masks; the stream advanced
    assert not np.array_equal(a(X), a.eval()(X))
    np.testing.assert_array_equal(a(X), b.eval()(X))  # eval: identity, deterministic
    a.train(), b.train()
    assert a[2].rng_state[0] == b[2].rng_state[0] + 1  # a ran once more in training mode
    b[2].rng_state[...] = a[2].rng_state
    opt_a, opt_b = optimizer(a), optimizer(b)
    adcompile.fit(loss_fn, a, opt_a, X, Y, epochs=2, batch_size=16, progress=False)
    loop(b, opt_b, epochs=2, batch_size=16)
    assert_same_parameters(a, b)
    np.testing.assert_array_equal(a[2].rng_state, b[2].rng_state)


def test_dropout_keeps_the_expected_fraction():
    out = F.dropout(np.ones((200, 50)), 0.3, True, 12345)
    kept = np.mean(out != 0)
    assert abs(kept - 0.7) < 0.02 and np.allclose(out[out != 0], 1 / 0.7)


def test_fit_and_train_step_with_numba():
    a, b = make(backend="numba"), make()
    opt_a, opt_b = optimizer(a, backend="numba"), optimizer(b)
    adcompile.fit(loss_fn, a, opt_a, X, Y, epochs=2, batch_size=16, progress=False)
    adcompile.fit(loss_fn, b, opt_b, X, Y, epochs=2, batch_size=16, progress=False)
    assert_same_parameters(a, b, rtol=1e-10)


def test_bad_training_input():
    model = make()
    with pytest.raises(CallError, match="X has 40 examples but y has 3"):
        adcompile.fit(loss_fn, model, optimizer(model), X, Y[:3], progress=False)
    with pytest.raises(CallError, match="must be an adcompile.Module"):
        adcompile.backward(loss_fn, object(), X, Y)
    frozen = make().requires_grad_(False)
    with pytest.raises(CallError, match="no parameter of the model is both trainable"):
        adcompile.train_step(loss_fn, frozen, optimizer(frozen))(X, Y)
