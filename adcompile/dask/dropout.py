"""Dropout with ``adcompile.fit``'s masks when a minibatch is split over row blocks.

``nn.Dropout`` draws its mask from ``uniform_noise``: a hash of the layer's ``rng_state`` and
each element's flat index in the layer's input. In ``adcompile.fit`` the input holds the whole
minibatch, so the element (row ``r``, feature ``j``) of a ``(batch, width...)`` input has index
``r * width + j``. A block (or a local learner) holding only some rows of the minibatch would
see its rows at other indices and draw other masks. ``shadow(model)`` is a copy of ``model``
sharing its Parameters in which every training-mode Dropout is a ``RowDropout``: the same
hash, with the rows' positions in the minibatch as an extra buffer ``rows``, so each block
draws, for its rows, exactly the mask ``fit`` draws for them. This holds when the Dropout's
input has the minibatch rows along axis 0 (any layer applied row by row before it: Linear,
activations, convolutions and pooling over NCHW inputs).
"""
import copy

import numpy as np

from ..modules.module import Module, touch
from ..nn.dropout import Dropout


def row_dropout(input, p, training, key, rows):
    """``F.dropout(batch, p, training, key)[rows]`` computed on ``input`` = ``batch[rows]``."""
    if not training or p == 0.0:
        return input
    flat = input.reshape(input.shape[0], -1)
    width = flat.shape[1]
    index = rows[:, None] * width + np.arange(width)[None, :]
    h = (index * 7919 + key * 104729 + 12345) % 2147483647  # nn.functional.uniform_noise's hash
    for _ in range(3):
        h = (h * h + 11) % 2147483647
        h = (h * 48271 + key) % 2147483647
    keep = h / 2147483647.0 >= p
    return np.where(keep, flat / (1.0 - p), 0.0).reshape(input.shape)


class RowDropout(Module):
    _adcompile_step_counters = ("rng_state",)

    def __init__(self, p, rng_state):
        super().__init__()
        self.p = float(p)
        self.register_buffer("rng_state", np.array(rng_state, dtype=np.int64))
        self.register_buffer("rows", np.arange(1, dtype=np.int64))

    def forward(self, input):
        return row_dropout(input, self.p, self.training, self.rng_state[0], self.rows)


def shadow(model):
    """(model or its shadow copy, flat buffer slots that take the rows' positions)."""
    dropouts = [(name, m) for name, m in model.named_modules() if isinstance(m, Dropout) and m.training and m.p > 0]
    if not dropouts:
        return model, []
    memo = {id(p): p for p in model.parameters()}  # the copy shares the Parameters
    copied = copy.deepcopy(model, memo)
    for name, layer in dropouts:
        *path, last = name.split(".")
        parent = copied
        for part in path:
            parent = parent._modules[part]
        replacement = RowDropout(layer.p, layer.rng_state)
        parent._modules[last] = replacement  # in place: setattr would move it to the end of the order
        replacement.__dict__["_adcompile_parents"].add(parent)
        touch(parent)
    n_params = sum(1 for _ in copied.named_parameters())
    slots = [n_params + k for k, (name, _) in enumerate(copied.named_buffers())
             if name == "rows" or name.endswith(".rows")]
    return copied, slots


def leaves(model, copied, slots, positions=None):
    """The flat arrays of ``copied`` (params, then buffers) taken from ``model``'s current values,
    with ``positions`` in the ``rows`` slots."""
    params = [p._data for _, p in copied.named_parameters()]
    if copied is model:
        return params + [b for _, b in model.named_buffers()]
    current = dict(model.named_buffers())
    buffers = [current.get(name, b) for name, b in copied.named_buffers()]
    out = params + buffers
    if positions is not None:
        for k in slots:
            out[k] = positions
    return out
