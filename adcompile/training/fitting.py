"""``adcompile.fit``: training over epochs with one compiled call per epoch (the minibatch
loop runs inside it, ``loops._Program``), plus what happens between epochs: the validation
loss, the learning-rate scheduler and the callbacks.

A scheduler is stepped as a PyTorch user steps it: ``OneCycleLR`` after every batch (its
rates for the epoch's batches are worked out before the compiled call and passed as one row
per batch, exactly the numbers a step-by-step loop would use), ``ReduceLROnPlateau`` after
each epoch with the validation loss (the training loss without validation data), any other
after each epoch.
"""
import numpy as np

from ..api.compiled import CompiledFunction
from ..boundary import api_boundary
from ..errors import CallError
from ..modules.module import touch
from ..optim.lr_scheduler.one_cycle import OneCycleLR
from ..optim.lr_scheduler.plateau import ReduceLROnPlateau
from .clipping import GradClipping
from .history import History, ProgressBar
from .loops import _backend, _batch_names, _check_model, _Program, _python_function, batch_order

_evaluators = {}


def _examples(X, y, kind, what="adcompile.fit"):
    X, y = np.asarray(X), np.asarray(y)
    prefix = "validation " if kind == "validation" else ""
    if len(X) != len(y):
        raise CallError(f"{what}: {prefix}X has {len(X)} examples but {prefix}y has {len(y)}")
    if len(X) == 0:
        raise CallError(f"{what}: no {kind} examples")
    return X, y


def checked_validation_data(validation_data, what="adcompile.fit"):
    """``(X_val, y_val)`` as numpy arrays, or None."""
    if validation_data is None:
        return None
    if not isinstance(validation_data, (tuple, list)) or len(validation_data) != 2:
        raise CallError(f"{what}: validation_data must be a pair (X_val, y_val)")
    return _examples(*validation_data, "validation", what)


def checked_batch_size(batch_size, what="adcompile.fit"):
    batch_size = int(batch_size)
    if batch_size < 1:
        raise CallError(f"{what}: batch_size must be >= 1, not {batch_size}")
    return batch_size


def used_rows(n, batch_size, drop_last, what="adcompile.fit"):
    """How many rows of an epoch's order are trained on: all, or with ``drop_last`` those of
    the full batches only."""
    used = n - n % batch_size if drop_last else n
    if used == 0:
        raise CallError(f"{what}: drop_last=True with {n} examples and batch_size={batch_size} "
                        "leaves no batch; use a smaller batch_size")
    return used


def validation_loss(loss_fn, model, X_val, y_val):
    """``loss_fn(model, X_val, y_val)`` in one compiled call, with every module in eval mode
    (Dropout off), each module's mode restored afterwards."""
    backend = _backend(loss_fn, model)
    if isinstance(loss_fn, CompiledFunction):
        evaluate = loss_fn
    else:
        pyfunc = _python_function(loss_fn)
        evaluate = _evaluators.get((pyfunc, backend))
        if evaluate is None:
            evaluate = _evaluators[(pyfunc, backend)] = CompiledFunction(pyfunc, backend=backend)
    modes = [(module, module.training) for module in model.modules()]
    if not any(training for _, training in modes):
        return float(evaluate(model, X_val, y_val))
    model.eval()
    try:
        return float(evaluate(model, X_val, y_val))
    finally:
        for module, training in modes:
            object.__setattr__(module, "training", training)
            touch(module)


def check_scheduler(scheduler, optimizer, epochs, batches_per_epoch, what="adcompile.fit"):
    if scheduler is None:
        return
    if not hasattr(scheduler, "step") or getattr(scheduler, "optimizer", None) is not optimizer:
        raise CallError(f"{what}: scheduler must be an adcompile.optim.lr_scheduler scheduler built on the "
                        "optimizer given to fit")
    if isinstance(scheduler, OneCycleLR):
        needed = scheduler.last_epoch + epochs * batches_per_epoch
        if needed > scheduler.total_steps:
            raise CallError(f"{what}: OneCycleLR is stepped after every batch, {batches_per_epoch} per epoch, "
                            f"so {epochs} epochs need total_steps >= {needed}, not {scheduler.total_steps} "
                            f"(build it with epochs={epochs}, steps_per_epoch={batches_per_epoch})")


def _hyperparameters_per_batch(optimizer, batches, scheduler):
    """One row of each group's hyperparameters per batch; a per-batch scheduler steps after each."""
    per_batch = isinstance(scheduler, OneCycleLR)
    rows = []
    for _ in range(batches if per_batch else 1):
        rows.append(optimizer.group_hypers())
        if per_batch:
            scheduler.step()
    if not per_batch:
        rows = rows * batches
    return [np.ascontiguousarray([row[k] for row in rows]) for k in range(len(optimizer.param_groups))]


def step_after_epoch(scheduler, loss, val_loss):
    if scheduler is None or isinstance(scheduler, OneCycleLR):
        return
    if isinstance(scheduler, ReduceLROnPlateau):
        scheduler.step(loss if val_loss is None else val_loss)
    else:
        scheduler.step()


@api_boundary
def fit(loss_fn, model, optimizer, X, y, epochs=1, batch_size=32, shuffle=True, seed=0, progress=True,
        callbacks=(), initial_epoch=0, validation_data=None, drop_last=False, scheduler=None,
        clip_grad_norm=None, clip_grad_value=None, clip_norm_type=2.0):
    """Train ``model`` on ``(X, y)``: minibatches of ``batch_size`` in the order
    ``batch_order(len(X), epoch, seed, shuffle)`` (``drop_last``: without the last, smaller
    one), ``loss_fn(model, X_batch, y_batch)``, its gradient and ``optimizer``'s update, with
    one compiled call per epoch. Parameters and optimizer state are updated in place.

    Returns a ``History``: the list of epoch losses (each the mean of its minibatch losses),
    with ``.val_loss`` (``validation_data=(X_val, y_val)``: ``loss_fn`` on it after each epoch,
    in eval mode) and ``.history``. ``scheduler`` is stepped per epoch (``OneCycleLR``: per
    batch; ``ReduceLROnPlateau``: with the validation loss, else the training loss).
    ``clip_grad_norm`` / ``clip_grad_value`` clip the gradients inside the compiled step
    (as ``nn.utils.clip_grad_norm_`` of order ``clip_norm_type`` / ``clip_grad_value_``).
    ``callbacks`` are called as ``callback(epoch, loss)`` after each epoch; one returning True
    stops training. ``initial_epoch`` resumes a run (epochs counted from it). The progress bar
    (a terminal only) says "compiling" until the first epoch has run.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> model = nn.Linear(1, 1).compile("python")  # "python": the generated Python, not numba
    >>> _ = adcompile.modules.init.zeros_(model.weight), adcompile.modules.init.zeros_(model.bias)
    >>> def loss_fn(model, X, y):
    ...     return np.mean((model(X)[:, 0] - y) ** 2)
    >>> X = np.linspace(-1.0, 1.0, 8)[:, None]
    >>> y = 2.0 * X[:, 0] + 1.0
    >>> opt = adcompile.optim.SGD(model.parameters(), lr=0.2)
    >>> history = adcompile.fit(loss_fn, model, opt, X, y, epochs=40, batch_size=4, progress=False,
    ...                         validation_data=(X[::3], y[::3]))
    >>> len(history), history[-1] < 1e-6 < history[0], history.val_loss[-1] < 1e-6
    (40, True, True)
    >>> np.round(model.weight.data, 3), np.round(model.bias.data, 3)
    (array([[2.]]), array([1.]))
    """
    _check_model(model, "adcompile.fit")
    X, y = _examples(X, y, "training")
    validation = checked_validation_data(validation_data)
    batch_size = checked_batch_size(batch_size)
    used = used_rows(len(X), batch_size, drop_last)
    batches = -(-used // batch_size)
    check_scheduler(scheduler, optimizer, epochs, batches)
    clipping = GradClipping(clip_grad_norm, clip_grad_value, clip_norm_type)
    names = _batch_names(loss_fn, 2, "fit")
    bar = ProgressBar(initial_epoch + epochs, initial_epoch, progress)
    history = History()
    try:
        program = _Program("fit_epoch", loss_fn, model, optimizer, names, clipping)
        for epoch in range(initial_epoch, initial_epoch + epochs):
            if not program.current(optimizer):  # a callback, scheduler or eval mode changed the structure
                program = _Program("fit_epoch", loss_fn, model, optimizer, names, clipping)
            order = batch_order(len(X), epoch, seed, shuffle)[:used]
            lr = optimizer.param_groups[0]["lr"]
            hypers = _hyperparameters_per_batch(optimizer, batches, scheduler)
            loss = float(program.program(*program.arguments((X, y), (order, batch_size), hypers)))
            val_loss = None
            if validation is not None:
                unchanged = program.current(optimizer)
                val_loss = validation_loss(loss_fn, model, *validation)
                if unchanged:  # the modes were switched to eval and back: the same structure
                    program.restamp()
            history.record(loss, lr, val_loss)
            bar.epoch_done(loss, val_loss)
            step_after_epoch(scheduler, loss, val_loss)
            if any(callback(epoch, loss) is True for callback in callbacks):
                break
    finally:
        bar.close()
    return history
