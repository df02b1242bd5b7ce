"""The elementwise activations of ``nn.functional`` beyond relu, tanh, sigmoid and gelu, with
PyTorch's formulas and defaults: leaky_relu, elu, silu, softplus, mish and hardtanh.

Branches are ``np.where`` over both sides; the side not taken is computed on a clamped input
(``np.minimum``), so that it cannot overflow into an infinite value whose derivative, times
the zero that ``np.where`` gives it, would be NaN.
"""
import numpy as np


def leaky_relu(input, negative_slope=0.01):
    """``x`` where ``x > 0``, else ``negative_slope * x``.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.leaky_relu(np.array([-2.0, 3.0]), 0.1)
    array([-0.2,  3. ])
    """
    return np.where(input > 0.0, input, input * negative_slope)


def elu(input, alpha=1.0):
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.elu(np.array([-1.0, 2.0])).round(4)
    array([-0.6321,  2.    ])
    """
    return np.where(input > 0.0, input, alpha * np.expm1(np.minimum(input, 0.0)))


def silu(input):
    """``x * sigmoid(x)`` (also called swish).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.silu(np.array([0.0, 1.0])).round(4)
    array([0.    , 0.7311])
    """
    return input / (1.0 + np.exp(-input))


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold``.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.softplus(np.array([0.0, 30.0])).round(4)
    array([ 0.6931, 30.    ])
    """
    scaled = input * beta
    soft = np.log1p(np.exp(np.minimum(scaled, threshold))) / beta
    return np.where(scaled > threshold, input, soft)


def mish(input):
    """``x * tanh(softplus(x))``.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.mish(np.array([-1.0, 1.0])).round(4)
    array([-0.3034,  0.8651])
    """
    return input * np.tanh(softplus(input))


def hardtanh(input, min_val=-1.0, max_val=1.0):
    """``x`` clipped to ``[min_val, max_val]``.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.hardtanh(np.array([-3.0, 0.5, 2.0]))
    array([-1. ,  0.5,  1. ])
    """
    return np.where(input < min_val, min_val, np.where(input > max_val, max_val, input))
