"""Recurrent cells with PyTorch's equations, weight layout and initialisation
(``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``): RNNCell, LSTMCell, GRUCell, and the steps
they share with the sequence layers of ``nn/rnn.py``. Each step takes the input's part of the
gates already computed (``x W_ih^T + b_ih``), so a sequence layer computes it for all time
steps in one product."""
import math

import numpy as np

from ..modules import init
from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional as F


def rnn_step(projected, h, w_hh, b_hh, nonlinearity):
    """``h' = act(projected + h W_hh^T + b_hh)``, ``act`` tanh or ReLU."""
    pre = projected + F.linear(h, w_hh, b_hh)
    if nonlinearity == "relu":
        return F.relu(pre)
    return np.tanh(pre)


def lstm_step(projected, h, c, w_hh, b_hh):
    """``(h', c')`` of an LSTM with gates ``i, f, g, o`` in that order."""
    gates = projected + F.linear(h, w_hh, b_hh)
    n = h.shape[1]
    i = F.sigmoid(gates[:, 0:n])
    f = F.sigmoid(gates[:, n:2 * n])
    g = np.tanh(gates[:, 2 * n:3 * n])
    o = F.sigmoid(gates[:, 3 * n:4 * n])
    c_next = f * c + i * g
    return o * np.tanh(c_next), c_next


def gru_step(projected, h, w_hh, b_hh):
    """``h' = (1 - z) * n + z * h`` with gates ``r, z, n`` in that order and
    ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``."""
    gh = F.linear(h, w_hh, b_hh)
    n = h.shape[1]
    r = F.sigmoid(projected[:, 0:n] + gh[:, 0:n])
    z = F.sigmoid(projected[:, n:2 * n] + gh[:, n:2 * n])
    candidate = np.tanh(projected[:, 2 * n:3 * n] + r * gh[:, 2 * n:3 * n])
    return (1.0 - z) * candidate + z * h


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

    def _zeros(self, input):
        """The default state: zeros of shape (N, hidden_size)."""
        return np.zeros((input.shape[0], self.hidden_size))

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}"


class RNNCell(_Cell):
    """``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (``nonlinearity="relu"`` for ReLU); ``hx``
    defaults to zeros.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> cell = nn.RNNCell(3, 5).compile("python")
    >>> cell(np.ones((2, 3)), np.zeros((2, 5))).shape
    (2, 5)
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", dtype=np.float64, generator=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r}; choose 'tanh' or 'relu'")
        super().__init__(input_size, hidden_size, 1, bias, dtype, generator)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        h = self._zeros(input) if hx is None else hx
        return rnn_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                        self.nonlinearity)


class LSTMCell(_Cell):
    """Gates ``i, f, g, o`` in that order; ``cell(x, (h, c))`` returns ``(h', c')`` as PyTorch's
    (``hx`` defaults to zeros; the older form ``cell(x, h, c)`` still works).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> cell = nn.LSTMCell(3, 5).compile("python")
    >>> h, c = cell(np.ones((2, 3)), (np.zeros((2, 5)), np.zeros((2, 5))))
    >>> h.shape, c.shape
    ((2, 5), (2, 5))
    """

    def __init__(self, input_size, hidden_size, bias=True, dtype=np.float64, generator=None):
        super().__init__(input_size, hidden_size, 4, bias, dtype, generator)

    def forward(self, input, hx=None, cx=None):
        if hx is None:
            h = self._zeros(input)
            c = self._zeros(input)
        elif cx is None:
            h, c = hx
        else:  # the older call cell(x, h, c)
            h = hx
            c = cx
        return lstm_step(F.linear(input, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)


class GRUCell(_Cell):
    """Gates ``r, z, n`` in that order: ``h' = (1 - z) * n + z * h``; ``hx`` defaults to zeros.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> cell = nn.GRUCell(3, 5).compile("python")
    >>> cell(np.ones((2, 3)), np.zeros((2, 5))).shape
    (2, 5)
    """

    def __init__(self, input_size, hidden_size, bias=True, dtype=np.float64, generator=None):
        super().__init__(input_size, hidden_size, 3, bias, dtype, generator)

    def forward(self, input, hx=None):
        h = self._zeros(input) if hx is None else hx
        return gru_step(F.linear(input, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
