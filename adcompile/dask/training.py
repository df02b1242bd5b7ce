"""``adcompile.dask.fit``: synchronous data-parallel minibatch training on a Dask cluster.

The rows of ``X`` and ``y`` are split into aligned blocks that are computed once and stay on
the workers (persisted futures). Each step takes the minibatch ``adcompile.fit`` would take
(``batch_order(n, epoch, seed)``); every block holding some of its rows computes, with the
compiled value-and-gradient of ``loss_fn``, the loss and gradient of those rows; the partial
results are weighted by their row counts and tree-reduced on the workers, so the client gets
the minibatch's mean loss and gradient, and the optimizer updates the parameters once. The
parameters travel with each step's block tasks. Because the minibatch gradient is exact (only
the order of additions differs), the parameters equal ``adcompile.fit``'s up to rounding, for
any number of workers.
"""
import numpy as np

from ..errors import CallError
from ..module_compile import flat_arguments, flat_function
from ..training import _backend, _batch_names, _check_model, _python_function, _trainable_entries, batch_order
from .blocks import RowBlocks, stand_in
from .cluster import client_for
from .kernel import build_kernel
from .reduction import finish, tree_reduce, weighted


def _step_task(kernel, leaves, block, local):
    """On a worker: loss and gradient of the rows ``local`` of one block, weighted by their count."""
    X, y = block
    result = kernel(list(leaves) + [X[local], y[local]])
    return weighted(len(local), result[0], result[1:], "mean")


def _persist_blocks(client, X, y, what):
    from dask import delayed
    blocks = RowBlocks([X, y], [0, 1], what)
    pairs = [delayed(tuple, pure=True)(list(block)) for block in blocks.blocks]
    futures = client.compute(pairs)
    return blocks, futures


def fit(loss_fn, model, optimizer, X, y, epochs=1, batch_size=32, client=None, sync_every=1, shuffle=True, seed=0,
        callbacks=(), initial_epoch=0, timeout=None):
    """Train ``model`` on ``(X, y)`` by synchronous data-parallel minibatch steps on Dask.

    ``X`` and ``y`` are dask arrays chunked along axis 0 (numpy arrays are one chunk); ``loss_fn``
    is a mean over the rows of a batch (``cross_entropy``, ``mse_loss``, ...). Same batches and
    arguments as ``adcompile.fit`` (returns the epoch losses, updates the parameters and optimizer
    state in place); ``client`` is a ``distributed.Client`` or None for a LocalCluster of this
    machine started and stopped here. ``timeout`` (seconds) bounds each wait on the cluster.
    Only ``sync_every=1`` (a synchronous step) is implemented.
    """
    what = "adcompile.dask.fit"
    _check_model(model, what)
    if sync_every != 1:
        raise CallError(f"{what}: sync_every={sync_every!r}: only sync_every=1 (synchronous steps, the same "
                        "parameters as adcompile.fit) is implemented; local SGD with averaging is not")
    if int(batch_size) < 1:
        raise CallError(f"{what}: batch_size must be >= 1, not {batch_size}")
    _batch_names(loss_fn, 2, "fit")
    pyfunc = _python_function(loss_fn)
    backend = _backend(loss_fn, model)
    entries = _trainable_entries(model, optimizer)
    flat = flat_function(pyfunc, [model, None, None], backend)
    derived = flat.derived("value_and_grad", tuple(index for index, *_ in entries))
    kernel = build_kernel(derived, flat_arguments([model, stand_in(X), stand_in(y)]), pyfunc.__name__)
    trained = [param for _, _, param, _ in entries]
    params = [p for _, p in model.named_parameters()]
    buffers = [b for _, b in model.named_buffers()]
    from ..nn.dropout import advance
    history = []
    with client_for(client) as c:
        blocks, futures = _persist_blocks(c, X, y, what)
        if blocks.n_rows == 0:
            raise CallError(f"{what}: no training examples")
        lows = np.asarray(blocks.block_offsets)
        highs = lows + np.asarray(blocks.block_sizes)
        kernel_future = c.scatter(kernel, broadcast=True, hash=False)
        saved_backend = optimizer.__dict__.get("backend")
        optimizer.backend = backend  # the update runs as in adcompile.fit's compiled program
        try:
            for epoch in range(initial_epoch, initial_epoch + epochs):
                order = batch_order(blocks.n_rows, epoch, seed, shuffle)
                total, steps = 0.0, 0
                for start in range(0, blocks.n_rows, int(batch_size)):
                    batch = order[start:start + int(batch_size)]
                    leaves = tuple([p._data for p in params] + buffers)
                    parts = []
                    for future, low, high in zip(futures, lows, highs):
                        local = batch[(batch >= low) & (batch < high)] - low
                        if len(local):
                            parts.append(c.submit(_step_task, kernel_future, leaves, future, local, pure=False))
                    reduced = tree_reduce(parts, lambda fn, *group: c.submit(fn, *group, pure=False))
                    loss, grads = finish(reduced.result(timeout=timeout), "mean")
                    old = [p.grad for p in trained]
                    try:
                        for p, g in zip(trained, grads):
                            p.grad = np.asarray(g, dtype=p.data.dtype)
                        optimizer.step()
                    finally:
                        for p, g in zip(trained, old):
                            p.grad = g
                    advance(model)
                    total += float(loss)
                    steps += 1
                history.append(total / steps)
                if any(callback(epoch, history[-1]) is True for callback in callbacks):
                    break
        finally:
            if saved_backend is None:
                optimizer.__dict__.pop("backend", None)
            else:
                optimizer.backend = saved_backend
            c.cancel(futures)
    return history
