"""Activation layers: ReLU, Tanh, Sigmoid, GELU, Softmax, LogSoftmax, LeakyReLU, ELU, SiLU, Softplus,
Mish and Hardtanh, with PyTorch's arguments and defaults."""
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


class LeakyReLU(Module):
    """``x`` where ``x > 0``, else ``negative_slope * x`` (``F.leaky_relu``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.LeakyReLU(0.1).compile("python")(np.array([-2.0, 3.0]))
    array([-0.2,  3. ])
    """

    def __init__(self, negative_slope=0.01):
        super().__init__()
        self.negative_slope = float(negative_slope)

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)`` (``F.elu``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.ELU().compile("python")(np.array([-1.0, 2.0])).round(4)
    array([-0.6321,  2.    ])
    """

    def __init__(self, alpha=1.0):
        super().__init__()
        self.alpha = float(alpha)

    def forward(self, input):
        return F.elu(input, self.alpha)

    def extra_repr(self):
        return f"alpha={self.alpha}"


class SiLU(Module):
    """``x * sigmoid(x)`` (``F.silu``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.SiLU().compile("python")(np.array([0.0, 1.0])).round(4)
    array([0.    , 0.7311])
    """

    def forward(self, input):
        return F.silu(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear where ``beta * x > threshold`` (``F.softplus``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.Softplus().compile("python")(np.array([0.0, 30.0])).round(4)
    array([ 0.6931, 30.    ])
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = float(beta), float(threshold)

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    """``x * tanh(softplus(x))`` (``F.mish``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.Mish().compile("python")(np.array([-1.0, 1.0])).round(4)
    array([-0.3034,  0.8651])
    """

    def forward(self, input):
        return F.mish(input)


class Hardtanh(Module):
    """``x`` clipped to ``[min_val, max_val]`` (``F.hardtanh``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.Hardtanh(-2.0, 2.0).compile("python")(np.array([-3.0, 0.5, 2.5]))
    array([-2. ,  0.5,  2. ])
    """

    def __init__(self, min_val=-1.0, max_val=1.0):
        super().__init__()
        if max_val <= min_val:
            raise ValueError(f"Hardtanh: max_val ({max_val}) must be greater than min_val ({min_val})")
        self.min_val, self.max_val = float(min_val), float(max_val)

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"
