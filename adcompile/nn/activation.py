"""Activation layers: ReLU, Tanh, Sigmoid, GELU, Softmax and LogSoftmax."""
from ..modules.module import Module
from . import functional as F


class ReLU(Module):
    """``max(x, 0)`` elementwise (``F.relu``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.ReLU().compile("python")(np.array([-1.0, 0.5]))  # "python": the generated Python, not numba
    array([0. , 0.5])
    """

    def forward(self, input):
        return F.relu(input)


class Tanh(Module):
    """``tanh(x)`` elementwise (``F.tanh``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.Tanh().compile("python")(np.array([0.0, 1.0])).round(4)
    array([0.    , 0.7616])
    """

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` elementwise (``F.sigmoid``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.Sigmoid().compile("python")(np.array([0.0, 2.0])).round(4)
    array([0.5   , 0.8808])
    """

    def forward(self, input):
        return F.sigmoid(input)


class GELU(Module):
    """``x * Phi(x)`` elementwise; ``approximate="tanh"`` for PyTorch's tanh formula (``F.gelu``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.GELU().compile("python")(np.array([-1.0, 0.0, 1.0])).round(4)
    array([-0.1587,  0.    ,  0.8413])
    >>> nn.GELU(approximate="tanh").compile("python")(np.array([1.0])).round(4)
    array([0.8412])
    """

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"


class Softmax(Module):
    """Softmax along ``dim`` (default the last axis; ``F.softmax``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.Softmax(dim=-1).compile("python")(np.array([[0.0, np.log(3.0)]]))
    array([[0.25, 0.75]])
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log of the softmax along ``dim``, computed stably (``F.log_softmax``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.LogSoftmax().compile("python")(np.array([[0.0, np.log(3.0)]])).round(4)
    array([[-1.3863, -0.2877]])
    """

    def forward(self, input):
        return F.log_softmax(input, self.dim)
