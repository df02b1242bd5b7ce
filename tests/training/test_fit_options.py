"""``fit``'s options against the PyTorch-style loop over the same batches (``zero_grad``,
``backward``, clipping, ``step``, the scheduler's ``step``): gradient clipping (also in
``train_step``), schedulers per epoch and per batch, validation loss, ``drop_last``, the
History it returns and the progress bar; one run on numba."""
import io
import sys

import numpy as np
import pytest

import adcompile
from adcompile import nn
from adcompile.errors import CallError
from adcompile.optim import lr_scheduler
import adcompile.nn.functional as F

RNG = np.random.default_rng(1)
X = RNG.normal(size=(30, 4)) * 3.0
Y = RNG.integers(0, 3, size=30)
X_VAL, Y_VAL = RNG.normal(size=(9, 4)), RNG.integers(0, 3, size=9)


def loss_fn(model, X, y):
    return F.cross_entropy(model(X), y)


def make(backend="python", dropout=False):
    adcompile.modules.init.manual_seed(4)
    layers = [nn.Linear(4, 6), nn.Tanh()] + ([nn.Dropout(0.2)] if dropout else []) + [nn.Linear(6, 3)]
    return nn.Sequential(*layers).compile(backend)


def sgd(model, backend="python", lr=0.5):
    opt = adcompile.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    opt.backend = backend
    return opt


def eval_loss(model, X_val, y_val):
    model.eval()
    try:
        return float(adcompile.compile(loss_fn, backend="python")(model, X_val, y_val))
    finally:
        model.train()


def loop(model, opt, epochs, batch_size, clip=None, scheduler=None, drop_last=False, validation=False):
    """The PyTorch-style loop: returns (epoch losses, validation losses)."""
    losses, val_losses = [], []
    for epoch in range(epochs):
        order = adcompile.batch_order(len(X), epoch)
        stop = len(X) - len(X) % batch_size if drop_last else len(X)
        batch_losses = []
        for start in range(0, stop, batch_size):
            batch = order[start:start + batch_size]
            opt.zero_grad()
            batch_losses.append(float(adcompile.backward(loss_fn, model, X[batch], Y[batch])))
            if clip is not None:
                clip(model.parameters())
            opt.step()
            if isinstance(scheduler, lr_scheduler.OneCycleLR):
                scheduler.step()
        losses.append(np.mean(batch_losses))
        if validation:
            val_losses.append(eval_loss(model, X_VAL, Y_VAL))
        if isinstance(scheduler, lr_scheduler.ReduceLROnPlateau):
            scheduler.step(val_losses[-1] if validation else losses[-1])
        elif scheduler is not None and not isinstance(scheduler, lr_scheduler.OneCycleLR):
            scheduler.step()
    return losses, val_losses


def assert_same_parameters(a, b, rtol=1e-11):
    for (name, p), (_, q) in zip(a.named_parameters(), b.named_parameters()):
        np.testing.assert_allclose(p.data, q.data, rtol=rtol, atol=1e-13, err_msg=name)


def assert_different_parameters(a, b):
    assert any(not np.allclose(p.data, q.data) for p, q in zip(a.parameters(), b.parameters()))


CLIPPINGS = {
    "norm 2": (dict(clip_grad_norm=0.3), lambda ps: nn.utils.clip_grad_norm_(ps, 0.3)),
    "norm inf": (dict(clip_grad_norm=0.05, clip_norm_type=float("inf")),
                 lambda ps: nn.utils.clip_grad_norm_(ps, 0.05, norm_type="inf")),
    "norm 3": (dict(clip_grad_norm=0.2, clip_norm_type=3), lambda ps: nn.utils.clip_grad_norm_(ps, 0.2, 3)),
    "value": (dict(clip_grad_value=0.02), lambda ps: nn.utils.clip_grad_value_(ps, 0.02)),
}


@pytest.mark.parametrize("name", sorted(CLIPPINGS))
def test_fit_clipping_equals_the_loop_with_nn_utils(name):
    options, clip = CLIPPINGS[name]
    fitted, stepped, unclipped = make(), make(), make()
    history = adcompile.fit(loss_fn, fitted, sgd(fitted), X, Y, epochs=2, batch_size=8, progress=False, **options)
    losses, _ = loop(stepped, sgd(stepped), 2, 8, clip=clip)
    adcompile.fit(loss_fn, unclipped, sgd(unclipped), X, Y, epochs=2, batch_size=8, progress=False)
    assert_same_parameters(fitted, stepped)
    np.testing.assert_allclose(history, losses, rtol=1e-12)
    assert_different_parameters(fitted, unclipped)  # the clipping did clip


def test_train_step_clipping_equals_backward_clip_step():
    a, b = make(), make()
    step = adcompile.train_step(loss_fn, a, sgd(a), clip_grad_norm=0.25)
    opt_b = sgd(b)
    for _ in range(3):
        step(X, Y)
        opt_b.zero_grad()
        adcompile.backward(loss_fn, b, X, Y)
        nn.utils.clip_grad_norm_(b.parameters(), 0.25)
        opt_b.step()
    assert_same_parameters(a, b)
    assert "clip_coef" in adcompile.source(step.program)


SCHEDULERS = {
    "StepLR": lambda opt: lr_scheduler.StepLR(opt, step_size=1, gamma=0.5),
    "OneCycleLR": lambda opt: lr_scheduler.OneCycleLR(opt, max_lr=1.0, epochs=3, steps_per_epoch=4),
    "ReduceLROnPlateau": lambda opt: lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5, threshold=0.2),
}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
@pytest.mark.parametrize("validation", [False, True])
def test_fit_with_scheduler_equals_the_loop(name, validation):
    fitted, stepped = make(), make()
    opt_a, opt_b = sgd(fitted), sgd(stepped)
    sched_a, sched_b = SCHEDULERS[name](opt_a), SCHEDULERS[name](opt_b)
    history = adcompile.fit(loss_fn, fitted, opt_a, X, Y, epochs=3, batch_size=8, progress=False,
                            scheduler=sched_a, validation_data=(X_VAL, Y_VAL) if validation else None)
    losses, val_losses = loop(stepped, opt_b, 3, 8, scheduler=sched_b, validation=validation)
    assert_same_parameters(fitted, stepped)
    np.testing.assert_allclose(history, losses, rtol=1e-12)
    np.testing.assert_allclose(history.val_loss, val_losses, rtol=1e-12)
    assert sched_a.get_last_lr() == sched_b.get_last_lr()
    assert opt_a.param_groups[0]["momentum"] == opt_b.param_groups[0]["momentum"]
    if name != "ReduceLROnPlateau":
        assert len(set(history.lr)) == 3  # the rate changed every epoch


def test_one_cycle_too_short_for_the_epochs():
    model = make()
    opt = sgd(model)
    short = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    with pytest.raises(CallError, match="4 per epoch, so 3 epochs need total_steps >= 12, not 10"):
        adcompile.fit(loss_fn, model, opt, X, Y, epochs=3, batch_size=8, progress=False, scheduler=short)
    other = lr_scheduler.StepLR(sgd(make()), step_size=1)
    with pytest.raises(CallError, match="built on the optimizer given to fit"):
        adcompile.fit(loss_fn, model, opt, X, Y, progress=False, scheduler=other)


def test_validation_runs_in_eval_mode_and_restores_the_modes():
    model = make(dropout=True)
    model[2].eval()  # a module the user put in eval mode stays there
    history = adcompile.fit(loss_fn, model, sgd(model), X, Y, epochs=2, batch_size=8, progress=False,
                            validation_data=(X_VAL, Y_VAL))
    assert model.training and model[0].training and not model[2].training
    assert history.val_loss[-1] == pytest.approx(eval_loss(model, X_VAL, Y_VAL), rel=1e-12)
    assert history.history == {"loss": list(history), "val_loss": history.val_loss, "lr": [0.5, 0.5]}


def test_drop_last_equals_the_loop_without_the_last_batch():
    fitted, stepped, full = make(), make(), make()
    history = adcompile.fit(loss_fn, fitted, sgd(fitted), X, Y, epochs=2, batch_size=8, drop_last=True,
                            progress=False)
    losses, _ = loop(stepped, sgd(stepped), 2, 8, drop_last=True)
    adcompile.fit(loss_fn, full, sgd(full), X, Y, epochs=2, batch_size=8, progress=False)
    assert_same_parameters(fitted, stepped)
    np.testing.assert_allclose(history, losses, rtol=1e-12)
    assert_different_parameters(fitted, full)
    with pytest.raises(CallError, match="leaves no batch"):
        adcompile.fit(loss_fn, fitted, sgd(fitted), X, Y, batch_size=64, drop_last=True, progress=False)


def test_history_is_still_the_list_of_epoch_losses():
    model = make()
    history = adcompile.fit(loss_fn, model, sgd(model), X, Y, epochs=3, batch_size=10, progress=False)
    assert isinstance(history, list) and len(history) == 3 and history == history.loss
    assert history.val_loss == [] and "val_loss" not in history.history
    assert [round(v, 12) for v in history] == [round(v, 12) for v in list(history)]


def test_bad_fit_options():
    model = make()
    with pytest.raises(CallError, match="validation_data must be a pair"):
        adcompile.fit(loss_fn, model, sgd(model), X, Y, validation_data=X_VAL, progress=False)
    with pytest.raises(CallError, match="validation X has 9 examples but validation y has 3"):
        adcompile.fit(loss_fn, model, sgd(model), X, Y, validation_data=(X_VAL, Y_VAL[:3]), progress=False)
    with pytest.raises(CallError, match="clip_grad_norm must be a positive finite number"):
        adcompile.fit(loss_fn, model, sgd(model), X, Y, clip_grad_norm=-1.0, progress=False)
    with pytest.raises(CallError, match="clip_grad_value must be a number"):
        adcompile.train_step(loss_fn, model, sgd(model), clip_grad_value="big")


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_bar_says_compiling_then_shows_the_losses(monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    model = make()
    adcompile.fit(loss_fn, model, sgd(model), X, Y, epochs=2, batch_size=10, validation_data=(X_VAL, Y_VAL))
    shown = terminal.getvalue()
    assert shown.index("compiling") < shown.index("epoch: ") < shown.index("val_loss=")
    assert "2/2" in shown and "loss=" in shown


def test_fit_options_on_numba_equal_the_python_backend():
    results = []
    for backend in ("numba", "python"):
        model = make(backend)
        opt = sgd(model, backend)
        scheduler = lr_scheduler.OneCycleLR(opt, max_lr=1.0, epochs=2, steps_per_epoch=4)
        history = adcompile.fit(loss_fn, model, opt, X, Y, epochs=2, batch_size=8, progress=False,
                                scheduler=scheduler, clip_grad_norm=0.3, validation_data=(X_VAL, Y_VAL))
        results.append((model, history))
    (numba_model, numba_history), (python_model, python_history) = results
    assert_same_parameters(numba_model, python_model, rtol=1e-10)
    np.testing.assert_allclose(numba_history.val_loss, python_history.val_loss, rtol=1e-10)
