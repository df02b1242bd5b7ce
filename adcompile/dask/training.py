"""``adcompile.dask.fit``: data-parallel minibatch training on a Dask cluster.

The rows of ``X`` and ``y`` are split into aligned blocks that are computed once and stay on
the workers (persisted futures). Both modes take the minibatches ``adcompile.fit`` takes
(``batch_order(n, epoch, seed)``).

``sync_every=1`` (synchronous): each step, every block holding some of the minibatch's rows
computes, with the compiled value-and-gradient of ``loss_fn``, the loss and gradient of those
rows; the partial results are weighted by their row counts and tree-reduced on the workers, so
the client gets the minibatch's mean loss and gradient, and the optimizer updates the
parameters once. Because the minibatch gradient is exact (only the order of additions
differs), the parameters equal ``adcompile.fit``'s up to rounding, for any number of workers.
The parameters are broadcast to the workers once per step (``client.scatter(...,
broadcast=True)``) and the block tasks receive their future.

``sync_every=k > 1`` (local SGD with averaging, an approximation): the blocks are split into
one group of consecutive blocks per worker (balanced by rows); each group is a local learner
that runs ``k`` optimizer steps with the compiled training step (``adcompile.train_step``'s
program) on its own rows of ``k`` consecutive minibatches, starting from the common parameters
and optimizer state; then parameters and optimizer state are averaged over the groups,
weighted by the rows each group trained on, with a tree reduction on the workers. One group
(one worker) is plain minibatch SGD, equal to ``adcompile.fit``.

``drop_last`` and the clipping options are ``adcompile.fit``'s: the synchronous path clips the
reduced minibatch gradient on the client before the update (``GradClipping.clip``), each local
learner clips its own gradient inside its compiled step (``GradClipping.lines``).
"""
import numpy as np

from ..errors import CallError
from ..module_compiler import flat_arguments, flat_function
from ..modules.step_counters import advance, step_counters
from ..optim.lr_scheduler.one_cycle import OneCycleLR
from ..training.clipping import GradClipping
from ..training.fitting import (check_scheduler, checked_batch_size, checked_validation_data, step_after_epoch,
                                used_rows, validation_loss)
from ..training.history import History
from ..training.loops import (_backend, _batch_names, _check_model, _Program, _python_function, _trainable_entries,
                        batch_order)
from .blocks import RowBlocks, stand_in
from .cluster import client_for
from .dropout import leaves as shadow_leaves, shadow
from .kernel import build_kernel
from .reduction import finish, tree_reduce, weighted


def _step_task(kernel, leaves, block, local, slots, positions):
    """On a worker: loss and gradient of the rows ``local`` of one block, weighted by their count
    (``positions``: their places in the minibatch, for the Dropout layers' ``rows`` slots)."""
    X, y = block
    leaves = list(leaves)
    for k in slots:
        leaves[k] = positions
    result = kernel(leaves + [X[local], y[local]])
    return weighted(len(local), result[0], result[1:], "mean")


def _local_round(kernel, shared, blocks, steps, counters, slots, n_params):
    """On a worker: one group's ``k`` local training steps from the common ``shared`` =
    (leaves, optimizer state arrays, group hyperparameters); ``steps`` lists per step None (no
    rows of that minibatch here) or (per block local row indices, the permutation putting the
    concatenated rows in minibatch order, their positions in the minibatch for the Dropout
    layers' ``rows`` slots). Returns (rows, None, row-weighted parameters and state, per-step
    row-weighted loss sums and per-step row counts) for ``combine``."""
    leaves, state, hypers = shared
    leaves = [np.array(a) for a in leaves]  # the program updates them in place: never the shared copies
    state = [np.array(a) for a in state]
    losses, counts = np.zeros(len(steps)), np.zeros(len(steps))
    for s, step in enumerate(steps):
        if step is None:
            for k in counters:  # the Dropout streams advance with the global step count
                leaves[k] += 1
            continue
        locals_, order, positions = step
        for k in slots:
            leaves[k] = positions
        X = np.concatenate([block[0][local] for block, local in zip(blocks, locals_)])[order]
        y = np.concatenate([block[1][local] for block, local in zip(blocks, locals_)])[order]
        losses[s] = len(order) * float(kernel(leaves + [X, y] + state + list(hypers))[0])
        counts[s] = len(order)
    rows = int(counts.sum())
    return rows, None, tuple(rows * a for a in leaves[:n_params] + state) + (losses, counts)


def _persist(client, blocks, groups=None):
    """Futures of the (X, y) blocks, computed once; with ``groups`` (worker address per block)
    each block is computed on its group's worker (elsewhere only if that worker is lost)."""
    from dask import delayed  # lazy: optional, slow to import
    pairs = [delayed(tuple, pure=True)(list(block)) for block in blocks.blocks]
    if groups is None:
        return client.compute(pairs)
    futures = [None] * len(pairs)
    for address in dict.fromkeys(groups):
        indices = [i for i, g in enumerate(groups) if g == address]
        for i, future in zip(indices, client.compute([pairs[i] for i in indices], workers=[address],
                                                     allow_other_workers=True)):
            futures[i] = future
    return futures


def _split_groups(sizes, count):
    """Group index of each block: ``count`` groups of consecutive blocks, balanced by rows."""
    count = max(1, min(count, len(sizes)))
    ends = np.cumsum(sizes)
    group = np.minimum((count * (ends - np.asarray(sizes) / 2.0) / ends[-1]).astype(int), count - 1)
    used = {g: k for k, g in enumerate(sorted(set(group.tolist())))}  # no empty group
    return [used[int(g)] for g in group]


def fit(loss_fn, model, optimizer, X, y, epochs=1, batch_size=32, client=None, sync_every=1, shuffle=True, seed=0,
        callbacks=(), initial_epoch=0, timeout=None, validation_data=None, scheduler=None, drop_last=False,
        clip_grad_norm=None, clip_grad_value=None, clip_norm_type=2.0):
    """Train ``model`` on ``(X, y)`` by data-parallel minibatch steps on Dask.

    ``X`` and ``y`` are dask arrays chunked along axis 0 (numpy arrays are one chunk); ``loss_fn``
    is a mean over the rows of a batch (``cross_entropy``, ``mse_loss``, ...). Same batches and
    arguments as ``adcompile.fit`` (returns the epoch losses, updates the parameters and optimizer
    state in place); ``client`` is a ``distributed.Client`` or None for a LocalCluster of this
    machine started and stopped here. ``timeout`` (seconds) bounds each wait on the cluster.
    As in ``adcompile.fit``, ``validation_data=(X_val, y_val)`` (numpy arrays, evaluated here
    after each epoch) fills the returned ``History``'s ``val_loss``, and ``scheduler`` is stepped
    after each epoch (``ReduceLROnPlateau`` with the validation loss; ``OneCycleLR``, stepped
    per batch, is ``adcompile.fit``'s only). ``drop_last=True`` leaves out the last, smaller
    minibatch of each epoch, as ``adcompile.fit`` does. ``clip_grad_norm`` / ``clip_grad_value``
    (order ``clip_norm_type``) clip the gradient as ``adcompile.fit`` does: with ``sync_every=1``
    the whole minibatch's gradient, after the workers' parts are summed (``adcompile.fit``'s
    parameters up to rounding); in local SGD each learner clips its own step's gradient (that of
    its rows of the minibatch) inside its compiled step.

    ``sync_every=1``: synchronous steps (the exact minibatch gradient, ``adcompile.fit``'s
    parameters up to rounding). ``sync_every=k > 1``: local SGD with averaging, an
    approximation: one learner per worker runs ``k`` steps on its own rows of ``k`` minibatches,
    then parameters and optimizer state are averaged weighted by rows (see ``docs/dask.md``).
    """
    if isinstance(sync_every, bool) or not isinstance(sync_every, (int, np.integer)) or sync_every < 1:
        raise CallError(f"adcompile.dask.fit: sync_every must be an integer >= 1, not {sync_every!r}")
    return _fit(loss_fn, model, optimizer, X, y, epochs, batch_size, client, int(sync_every), sync_every > 1,
                shuffle, seed, callbacks, initial_epoch, timeout, validation_data, scheduler, drop_last,
                GradClipping(clip_grad_norm, clip_grad_value, clip_norm_type))


def _fit(loss_fn, model, optimizer, X, y, epochs, batch_size, client, sync_every, local, shuffle, seed, callbacks,
         initial_epoch, timeout, validation_data=None, scheduler=None, drop_last=False, clipping=None):
    """``fit``; ``local`` selects local SGD (also with ``sync_every=1``, which the tests compare
    with the synchronous path)."""
    what = "adcompile.dask.fit"
    _check_model(model, what)
    batch_size = checked_batch_size(batch_size, what)
    clipping = clipping if clipping is not None else GradClipping()
    names = _batch_names(loss_fn, 2, "fit")
    backend = _backend(loss_fn, model)
    entries = _trainable_entries(model, optimizer)
    blocks = RowBlocks([X, y], [0, 1], what)
    if blocks.n_rows == 0:
        raise CallError(f"{what}: no training examples")
    used = used_rows(blocks.n_rows, batch_size, drop_last, what)
    validation = checked_validation_data(validation_data, what)
    if isinstance(scheduler, OneCycleLR):
        raise CallError(f"{what} steps a scheduler after each epoch, and OneCycleLR steps after each batch: "
                        "train with adcompile.fit, or use another scheduler")
    check_scheduler(scheduler, optimizer, epochs, 1, what)
    run = _LocalSGD if local else _Synchronous
    trainer = run(loss_fn, model, optimizer, names, backend, entries, blocks, X, y, clipping)
    history = History()
    with client_for(client) as c:
        saved_backend = optimizer.__dict__.get("backend")
        optimizer.backend = backend  # the update runs as in adcompile.fit's compiled program
        try:
            trainer.start(c)
            for epoch in range(initial_epoch, initial_epoch + epochs):
                order = batch_order(blocks.n_rows, epoch, seed, shuffle)[:used]
                batches = [order[start:start + batch_size] for start in range(0, used, batch_size)]
                losses, lr = [], optimizer.param_groups[0]["lr"]
                for first in range(0, len(batches), sync_every):
                    losses += trainer.run(c, batches[first:first + sync_every], timeout)
                loss = float(np.mean(losses))
                val_loss = None if validation is None else validation_loss(loss_fn, model, *validation)
                history.record(loss, lr, val_loss)
                step_after_epoch(scheduler, loss, val_loss)
                if any(callback(epoch, loss) is True for callback in callbacks):
                    break
        finally:
            if saved_backend is None:
                optimizer.__dict__.pop("backend", None)
            else:
                optimizer.backend = saved_backend
            trainer.stop(c)
    return history


class _Synchronous:
    """One reduced gradient per minibatch, one optimizer update on the client."""

    def __init__(self, loss_fn, model, optimizer, names, backend, entries, blocks, X, y, clipping):
        pyfunc = _python_function(loss_fn)
        self.shadow, self.slots = shadow(model)  # Dropout layers that draw fit's masks for a block's rows
        flat = flat_function(pyfunc, [self.shadow, None, None], backend)
        derived = flat.derived("value_and_grad", tuple(index for index, *_ in entries))
        self.kernel = build_kernel(derived, flat_arguments([self.shadow, stand_in(X), stand_in(y)]), pyfunc.__name__)
        self.model, self.optimizer, self.blocks = model, optimizer, blocks
        self.trained = [param for _, param, _ in entries]
        self.clipping = clipping
        self.futures = []

    def start(self, c):
        self.futures = _persist(c, self.blocks)
        self.lows = np.asarray(self.blocks.block_offsets)
        self.highs = self.lows + np.asarray(self.blocks.block_sizes)
        self.kernel_future = c.scatter(self.kernel, broadcast=True, hash=False)

    def stop(self, c):
        c.cancel(self.futures)

    def run(self, c, batches, timeout):
        losses = []
        for batch in batches:
            leaves = tuple(shadow_leaves(self.model, self.shadow, self.slots))
            # sent once to every worker (not once per block task); the tasks get the future
            [shared] = c.scatter([leaves], broadcast=True, hash=False)
            parts = []
            for future, low, high in zip(self.futures, self.lows, self.highs):
                mask = (batch >= low) & (batch < high)
                if mask.any():
                    positions = np.nonzero(mask)[0] if self.slots else None
                    parts.append(c.submit(_step_task, self.kernel_future, shared, future, batch[mask] - low,
                                          self.slots, positions, pure=False))
            reduced = tree_reduce(parts, lambda fn, *group: c.submit(fn, *group, pure=False))
            loss, grads = finish(reduced.result(timeout=timeout), "mean")
            old = [p.grad for p in self.trained]
            try:
                for p, g in zip(self.trained, grads):
                    p.grad = np.asarray(g, dtype=p.data.dtype)
                self.clipping.clip(self.trained)  # the whole minibatch's gradient, as adcompile.fit clips it
                self.optimizer.step()
            finally:
                for p, g in zip(self.trained, old):
                    p.grad = g
            advance(self.model)
            losses.append(float(loss))
        return losses


class _LocalSGD:
    """Per round of ``k`` minibatches: one task per group of blocks (on its worker) running ``k``
    compiled training steps, then the row-weighted average of parameters and optimizer state."""

    def __init__(self, loss_fn, model, optimizer, names, backend, entries, blocks, X, y, clipping):
        self.shadow, self.slots = shadow(model)  # Dropout layers that draw fit's masks for a group's rows
        # each learner clips the gradient of its own rows of a minibatch
        self.program = _Program("train_step", loss_fn, self.shadow, optimizer, names, clipping)
        example = self.program.arguments((stand_in(X), stand_in(y)))
        self.kernel = build_kernel(self.program.program, example, _python_function(loss_fn).__name__)
        self.model, self.optimizer, self.blocks = model, optimizer, blocks
        self.params = self.program.params
        self.buffers = self.program.buffers
        counter_ids = {id(counter) for _, counter in step_counters(self.shadow)}
        self.counters = [len(self.params) + k for k, b in enumerate(self.buffers) if id(b) in counter_ids]
        self.futures = []

    def start(self, c):
        workers = sorted(c.scheduler_info()["workers"])
        if not workers:
            raise CallError("adcompile.dask.fit: the cluster has no workers")
        self.group_of = _split_groups(self.blocks.block_sizes, len(workers))
        self.n_groups = len(set(self.group_of))
        self.addresses = [workers[g] for g in range(self.n_groups)]
        self.futures = _persist(c, self.blocks, [self.addresses[g] for g in self.group_of])
        self.kernel_future = c.scatter(self.kernel, broadcast=True, hash=False)
        offsets = np.asarray(self.blocks.block_offsets)
        self.members = [[i for i, g in enumerate(self.group_of) if g == group] for group in range(self.n_groups)]
        self.lows = offsets
        self.highs = offsets + np.asarray(self.blocks.block_sizes)

    def stop(self, c):
        c.cancel(self.futures)

    def _plan(self, members, batch):
        """(per block local indices, permutation to minibatch order) of the group's rows of ``batch``."""
        low, high = self.lows[members[0]], self.highs[members[-1]]
        mask = (batch >= low) & (batch < high)
        if not mask.any():
            return None
        mine = batch[mask]
        block = np.searchsorted(self.highs[members], mine, side="right")  # index among the members
        locals_ = [mine[block == j] - self.lows[i] for j, i in enumerate(members)]
        positions = np.nonzero(mask)[0] if self.slots else None
        return locals_, np.argsort(np.argsort(block, kind="stable"), kind="stable"), positions

    def run(self, c, batches, timeout):
        state = self.program.plan.state_values()
        hypers = self.optimizer.group_hypers()
        leaves = shadow_leaves(self.model, self.shadow, self.slots)
        [shared] = c.scatter([(leaves, state, hypers)], broadcast=True, hash=False)
        parts = []
        for members, address in zip(self.members, self.addresses):
            steps = [self._plan(members, batch) for batch in batches]
            if all(step is None for step in steps):
                continue
            parts.append(c.submit(_local_round, self.kernel_future, shared, [self.futures[i] for i in members],
                                  steps, self.counters, self.slots, len(self.params), workers=[address],
                                  allow_other_workers=True, pure=False))
        reduced = tree_reduce(parts, lambda fn, *group: c.submit(fn, *group, pure=False))
        rows, _, arrays = reduced.result(timeout=timeout)
        *averaged, loss_sums, counts = arrays
        n_params = len(self.params)
        for p, value in zip(self.params, averaged[:n_params]):
            p._data[...] = value / rows
        n_state = len(self.optimizer.state_names) + 1
        for k, (array, value) in enumerate(zip(state, averaged[n_params:])):
            if k % n_state == n_state - 1:
                array += len(batches)  # the step count: the global number of steps, as in fit
            else:
                array[...] = value / rows
        for _ in batches:
            advance(self.model)
        return list(loss_sums / counts)
