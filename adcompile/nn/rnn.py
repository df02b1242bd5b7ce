"""Sequence layers RNN, LSTM and GRU with PyTorch's arguments (``input_size, hidden_size,
num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False``), parameter
names (``weight_ih_l0``, ``bias_hh_l1_reverse``...), weight layout, gate order (LSTM ``i, f, g,
o``; GRU ``r, z, n``, with ``r`` multiplying ``W_hn h + b_hn``) and initialisation
``U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.

``forward(input, hx=None)`` takes input (L, N, H_in) (``batch_first``: (N, L, H_in)) and returns
``(output, h_n)`` (LSTM: ``(output, (h_n, c_n))``), as PyTorch. Each layer and direction is a
loop over time steps, unrolled over layers and directions when compiled; the input products of
all time steps are one matrix product. The compiled code reads the parameters through
``_layer_weights``, per layer a tuple per direction of ``(w_ih, w_hh, b_ih, b_hh)``, kept in step
with the attributes as PyTorch keeps its ``_flat_weights``.
"""
import math

import numpy as np

from ..frontend.static_values import static_function
from ..modules import init
from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional as F
from .recurrent import gru_step, lstm_step, rnn_step


class _RNNBase(Module):
    _gates = 1
    _kind = "RNN"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, dtype=np.float64, generator=None):
        super().__init__()
        name = type(self).__name__
        for label, value in (("input_size", input_size), ("hidden_size", hidden_size), ("num_layers", num_layers)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name}: {label} must be a positive int, not {value!r}")
        if dropout != 0:
            raise ValueError(f"{name}: dropout={dropout} between layers is not supported; pass dropout=0 "
                             "and apply nn.Dropout to the output of one layer before the next")
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.bidirectional = bool(bias), bool(batch_first), bool(bidirectional)
        self.dropout = 0.0
        directions = 2 if bidirectional else 1
        names = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else hidden_size * directions
            for suffix in ("", "_reverse")[:directions]:
                shapes = {"weight_ih": (self._gates * hidden_size, layer_input),
                          "weight_hh": (self._gates * hidden_size, hidden_size)}
                if bias:
                    shapes.update(bias_ih=(self._gates * hidden_size,), bias_hh=(self._gates * hidden_size,))
                group = []
                for kind, shape in shapes.items():
                    param_name = f"{kind}_l{layer}{suffix}"
                    setattr(self, param_name, Parameter(np.empty(shape, dtype=dtype)))
                    group.append(param_name)
                names.append(tuple(group))
        self._flat_weights_names = tuple(names)
        self._update_flat_weights()
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None):
        bound = 1.0 / math.sqrt(self.hidden_size)
        for param in self.parameters():
            init.uniform_(param, -bound, bound, generator)

    def _update_flat_weights(self):
        """``_layer_weights``: per layer, per direction, (w_ih, w_hh, b_ih, b_hh) (biases None
        without ``bias``), the Parameters the attributes hold now."""
        directions = 2 if self.bidirectional else 1
        groups = []
        for group in self._flat_weights_names:
            params = tuple(getattr(self, name) for name in group)
            groups.append(params if self.bias else params + (None, None))
        layers = tuple(tuple(groups[k:k + directions]) for k in range(0, len(groups), directions))
        object.__setattr__(self, "_layer_weights", layers)

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if any(name in group for group in self.__dict__.get("_flat_weights_names", ())):
            self._update_flat_weights()

    def extra_repr(self):
        text = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if not self.bias:
            text += ", bias=False"
        if self.batch_first:
            text += ", batch_first=True"
        if self.bidirectional:
            text += ", bidirectional=True"
        return text

    def _initial_state(self, hx, input):
        """``hx``, or zeros of shape (num_layers * directions, N, hidden_size)."""
        if hx is None:
            directions = 2 if self.bidirectional else 1
            return np.zeros((self.num_layers * directions, input.shape[1], self.hidden_size))
        return hx

    def _direction(self, layer_input, h, c, weights, reverse):
        """(output, last h, last c) of one layer in one direction over input (L, N, features)."""
        w_ih, w_hh, b_ih, b_hh = weights
        steps, batch, features = layer_input.shape[0], layer_input.shape[1], layer_input.shape[2]
        projected = F.linear(layer_input.reshape(steps * batch, features), w_ih, b_ih)
        projected = projected.reshape(steps, batch, projected.shape[1])
        out = np.zeros((steps, batch, self.hidden_size))
        for step in range(steps):
            t = steps - 1 - step if reverse else step
            h, c = self._step(projected[t], h, c, w_hh, b_hh)
            out[t] = h
        return out, h, c

    def _run(self, input, h0, c0):
        """(output, h_n, c_n) of all layers and directions; input (L, N, H_in)."""
        directions = 2 if self.bidirectional else 1
        h_n = np.zeros(h0.shape)
        c_n = np.zeros(c0.shape)
        layer_input = input
        for layer, weights in enumerate(self._layer_weights):  # unrolled: a tuple known when compiling
            first = layer * directions
            out, h, c = self._direction(layer_input, h0[first], c0[first], weights[0], False)
            h_n[first] = h
            c_n[first] = c
            if self.bidirectional:
                back, h, c = self._direction(layer_input, h0[first + 1], c0[first + 1], weights[1], True)
                h_n[first + 1] = h
                c_n[first + 1] = c
                out = np.concatenate((out, back), axis=2)
            layer_input = out
        return layer_input, h_n, c_n

    def _batch_major(self, input):
        """(L, N, ...) from the user's layout, and back (the same transposition)."""
        checked_ndim = _check_sequence(input.ndim, self._kind)  # noqa: F841 (a clear error for the wrong rank)
        return np.transpose(input, (1, 0, 2)) if self.batch_first else input


@static_function
def _check_sequence(ndim, layer):
    if ndim != 3:
        raise ValueError(f"{layer} expects a 3-d input (L, N, H_in), or (N, L, H_in) with batch_first=True; "
                         f"got a {ndim}-d input (add a batch axis of 1 for a single sequence)")
    return ndim


class RNN(_RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_(t-1) W_hh^T + b_hh)`` (``nonlinearity="relu"``
    for ReLU), as ``torch.nn.RNN``; returns ``(output, h_n)``.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> rnn = nn.RNN(3, 5, num_layers=2).compile("python")
    >>> output, h_n = rnn(np.ones((7, 2, 3)))  # (time, batch, features)
    >>> output.shape, h_n.shape
    ((7, 2, 5), (2, 2, 5))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, dtype=np.float64, generator=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}; choose 'tanh' or 'relu'")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional, dtype,
                         generator)

    def _step(self, projected, h, c, w_hh, b_hh):
        return rnn_step(projected, h, w_hh, b_hh, self.nonlinearity), c

    def forward(self, input, hx=None):
        x = self._batch_major(input)
        h0 = self._initial_state(hx, x)
        output, h_n, _ = self._run(x, h0, h0)
        return self._batch_major(output), h_n


class LSTM(_RNNBase):
    """Long short-term memory, as ``torch.nn.LSTM`` (gates ``i, f, g, o``); ``hx`` is ``(h_0, c_0)``
    and the result ``(output, (h_n, c_n))``.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> lstm = nn.LSTM(3, 4, batch_first=True, bidirectional=True).compile("python")
    >>> output, (h_n, c_n) = lstm(np.ones((2, 6, 3)))  # (batch, time, features)
    >>> output.shape, h_n.shape, c_n.shape
    ((2, 6, 8), (2, 2, 4), (2, 2, 4))
    """

    _gates = 4
    _kind = "LSTM"

    def _step(self, projected, h, c, w_hh, b_hh):
        return lstm_step(projected, h, c, w_hh, b_hh)

    def forward(self, input, hx=None):
        x = self._batch_major(input)
        if hx is None:
            h0 = self._initial_state(None, x)
            c0 = self._initial_state(None, x)
        else:
            h0, c0 = hx
        output, h_n, c_n = self._run(x, h0, c0)
        return self._batch_major(output), (h_n, c_n)


class GRU(_RNNBase):
    """Gated recurrent unit, as ``torch.nn.GRU`` (gates ``r, z, n``); returns ``(output, h_n)``.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> gru = nn.GRU(3, 4).compile("python")
    >>> output, h_n = gru(np.ones((5, 2, 3)))
    >>> output.shape, h_n.shape
    ((5, 2, 4), (1, 2, 4))
    """

    _gates = 3
    _kind = "GRU"

    def _step(self, projected, h, c, w_hh, b_hh):
        return gru_step(projected, h, w_hh, b_hh), c

    def forward(self, input, hx=None):
        x = self._batch_major(input)
        h0 = self._initial_state(hx, x)
        output, h_n, _ = self._run(x, h0, h0)
        return self._batch_major(output), h_n
