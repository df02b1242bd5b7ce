"""Dropout with a reproducible random stream.

The mask is a function of the buffer ``rng_state`` (seeded at construction, saved in the
state dict) and the element index (``functional.uniform_noise``). The state advances by one
after every training-mode call: after ``model(x)`` and ``adcompile.backward``, and inside the
compiled programs of ``train_step`` and ``fit`` after each step (modules name such counters
in ``_adcompile_step_counters``, ``step_counters.py``). In eval mode the layer is the identity.
"""
import numpy as np

from ..modules.init import default_generator
from ..modules.module import Module
from . import functional as F


class Dropout(Module):
    """In training mode, zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``; the masks come from ``seed`` and a step counter (a buffer) that advances after each training-mode call, so runs are reproducible. In evaluation mode, the identity.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> drop = nn.Dropout(p=0.5, seed=0).compile("python")
    >>> sorted(set(drop(np.ones(100)).tolist()))  # zeroed, or scaled by 1 / (1 - p)
    [0.0, 2.0]
    >>> _ = drop.eval()  # evaluation mode: the identity
    >>> drop(np.ones(3))
    array([1., 1., 1.])
    """

    _adcompile_step_counters = ("rng_state",)

    def __init__(self, p=0.5, seed=None):
        super().__init__()
        if not 0.0 <= p < 1.0:
            raise ValueError(f"dropout probability has to be in [0, 1), but got {p}")
        self.p = float(p)
        seed = int(default_generator().integers(2 ** 31 - 1)) if seed is None else int(seed)
        self.register_buffer("rng_state", np.array([seed], dtype=np.int64))

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.rng_state[0])

    def extra_repr(self):
        return f"p={self.p}"

