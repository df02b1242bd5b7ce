"""Linear, Identity and Flatten."""
import math

import numpy as np

from ..modules import init
from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional as F


class Linear(Module):
    """``y = x @ weight.T + bias`` with PyTorch's default initialisation
    (``U(-1/sqrt(in_features), 1/sqrt(in_features))`` for weight and bias).

    >>> import numpy as np, adcompile
    >>> layer = adcompile.nn.Linear(3, 2).compile("python")  # "python": the generated Python, not numba
    >>> layer
    Linear(in_features=3, out_features=2, bias=True)
    >>> layer.weight.shape, layer.bias.shape
    ((2, 3), (2,))
    >>> layer(np.ones((4, 3))).shape
    (4, 2)
    """

    def __init__(self, in_features, out_features, bias=True, dtype=np.float64, generator=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(np.empty((out_features, in_features), dtype=dtype))
        if bias:
            self.bias = Parameter(np.empty(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters(generator)

    def reset_parameters(self, generator=None):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound, generator)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Identity(Module):
    """Returns its input unchanged (a placeholder layer).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.Identity().compile("python")(np.array([1.0, 2.0]))
    array([1., 2.])
    """

    def forward(self, input):
        return input


class Flatten(Module):
    """Flatten all axes but the first (``start_dim=1``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.Flatten().compile("python")(np.ones((2, 3, 4))).shape
    (2, 12)
    """

    def forward(self, input):
        return F.flatten(input)
