"""Recurrent cells with PyTorch's equations, weight layout and initialisation
(``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``): RNNCell, LSTMCell, GRUCell. A sequence is
a loop over time steps in the caller's ``forward``."""
import math

import numpy as np

from ..modules import init
from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional as F


class _Cell(Module):
    def __init__(self, input_size, hidden_size, gates, bias, dtype, generator):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.weight_ih = Parameter(np.empty((gates * hidden_size, input_size), dtype=dtype))
        self.weight_hh = Parameter(np.empty((gates * hidden_size, hidden_size), dtype=dtype))
        if bias:
            self.bias_ih = Parameter(np.empty(gates * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(np.empty(gates * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        bound = 1.0 / math.sqrt(hidden_size)
        for param in self.parameters():
            init.uniform_(param, -bound, bound, generator)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"


class RNNCell(_Cell):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (``nonlinearity="relu"`` for ReLU).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> cell = nn.RNNCell(3, 5).compile("python")
    >>> cell(np.ones((2, 3)), np.zeros((2, 5))).shape
    (2, 5)
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", dtype=np.float64, generator=None):
        super().__init__(input_size, hidden_size, 1, bias, dtype, generator)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx):
        pre = F.linear(input, self.weight_ih, self.bias_ih) + F.linear(hx, self.weight_hh, self.bias_hh)
        if self.nonlinearity == "relu":
            return F.relu(pre)
        return np.tanh(pre)


class LSTMCell(_Cell):
    """Gates ``i, f, g, o`` in that order; returns ``(h', c')``.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> cell = nn.LSTMCell(3, 5).compile("python")
    >>> h, c = cell(np.ones((2, 3)), np.zeros((2, 5)), np.zeros((2, 5)))
    >>> h.shape, c.shape
    ((2, 5), (2, 5))
    """

    def __init__(self, input_size, hidden_size, bias=True, dtype=np.float64, generator=None):
        super().__init__(input_size, hidden_size, 4, bias, dtype, generator)

    def forward(self, input, hx, cx):
        gates = F.linear(input, self.weight_ih, self.bias_ih) + F.linear(hx, self.weight_hh, self.bias_hh)
        n = self.hidden_size
        i = F.sigmoid(gates[:, 0:n])
        f = F.sigmoid(gates[:, n:2 * n])
        g = np.tanh(gates[:, 2 * n:3 * n])
        o = F.sigmoid(gates[:, 3 * n:4 * n])
        c_next = f * cx + i * g
        h_next = o * np.tanh(c_next)
        return h_next, c_next


class GRUCell(_Cell):
    """Gates ``r, z, n`` in that order: ``h' = (1 - z) * n + z * h``.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> cell = nn.GRUCell(3, 5).compile("python")
    >>> cell(np.ones((2, 3)), np.zeros((2, 5))).shape
    (2, 5)
    """

    def __init__(self, input_size, hidden_size, bias=True, dtype=np.float64, generator=None):
        super().__init__(input_size, hidden_size, 3, bias, dtype, generator)

    def forward(self, input, hx):
        gi = F.linear(input, self.weight_ih, self.bias_ih)
        gh = F.linear(hx, self.weight_hh, self.bias_hh)
        n = self.hidden_size
        r = F.sigmoid(gi[:, 0:n] + gh[:, 0:n])
        z = F.sigmoid(gi[:, n:2 * n] + gh[:, n:2 * n])
        candidate = np.tanh(gi[:, 2 * n:3 * n] + r * gh[:, 2 * n:3 * n])
        return (1.0 - z) * candidate + z * hx
