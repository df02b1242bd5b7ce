"""The layers of ``nn.functional`` that are not convolutions, normalisation or losses: linear,
relu/tanh/sigmoid/gelu, softmax and log_softmax, layer_norm, embedding, flatten, one_hot and
the seeded dropout (``uniform_noise``)."""
import math

import numpy as np

from ...frontend.static_values import static_function

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


@static_function
def _is_matrix(ndim):
    return ndim == 2


@static_function
def _shape_tuple(shape):
    """An int or a tuple of ints as a tuple (run when the function is compiled)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if not shape or not all(isinstance(n, int) and n > 0 for n in shape):
        raise ValueError(f"normalized_shape must be a positive int or a non-empty tuple of them, not {shape}")
    return shape


def linear(input, weight, bias=None):
    """``input @ weight.T + bias``.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.linear(np.ones((2, 3)), np.ones((4, 3)), np.arange(4.0))
    array([[3., 4., 5., 6.],
           [3., 4., 5., 6.]])
    """
    if _is_matrix(input.ndim):  # decided when the function is compiled
        # the same product, written so that reverse mode computes weight's gradient as one
        # contiguous product (grad.T @ input) rather than (input.T @ grad).T added into a
        # transposed buffer: 10-25% of an MLP training step (benchmarks/bench_mlp_step.py)
        output = (weight @ input.T).T
    else:
        output = input @ weight.T
    if bias is not None:
        output = output + bias
    return output


def relu(input):
    """``max(x, 0)`` elementwise.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.relu(np.array([-1.0, 0.5]))  # from Python it runs as numpy; in compiled code it is inlined
    array([0. , 0.5])
    """
    return np.maximum(input, 0.0)


def tanh(input):
    """``tanh(x)`` elementwise.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.tanh(np.array([0.0, 1.0])).round(4)
    array([0.    , 0.7616])
    """
    return np.tanh(input)


def sigmoid(input):
    """``1 / (1 + exp(-x))`` elementwise.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.sigmoid(np.array([0.0, 2.0])).round(4)
    array([0.5   , 0.8808])
    """
    return 1.0 / (1.0 + np.exp(-input))


def erf(x):
    """The error function (Abramowitz and Stegun 7.1.26; absolute error below 1.5e-7).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> round(float(F.erf(0.5)), 6)
    0.5205
    """
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def gelu(input, approximate="none"):
    """``x * Phi(x)``; ``approximate="tanh"`` uses PyTorch's tanh formula exactly.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.gelu(np.array([-1.0, 0.0, 1.0])).round(4)
    array([-0.1587,  0.    ,  0.8413])
    """
    if approximate == "tanh":
        return 0.5 * input * (1.0 + np.tanh(_SQRT_2_OVER_PI * (input + 0.044715 * input * input * input)))
    return 0.5 * input * (1.0 + erf(input * 0.7071067811865476))


def softmax(input, dim=-1):
    """Softmax along ``dim`` (the maximum subtracted first, so large inputs do not overflow).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.softmax(np.array([[0.0, np.log(3.0)]]))
    array([[0.25, 0.75]])
    >>> F.softmax(np.array([1000.0, 1000.0]))
    array([0.5, 0.5])
    """
    shifted = input - np.max(input, axis=dim, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=dim, keepdims=True)


def log_softmax(input, dim=-1):
    """Log of the softmax along ``dim``, computed stably (``x - logsumexp(x)``).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.log_softmax(np.array([[0.0, np.log(3.0)]])).round(4)
    array([[-1.3863, -0.2877]])
    """
    shifted = input - np.max(input, axis=dim, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the trailing axes ``normalized_shape`` (an int for the last axis, or a
    tuple of ints, as PyTorch's: the last ``len(normalized_shape)`` axes of ``input``), then
    scale by ``weight`` and shift by ``bias`` (arrays of shape ``normalized_shape``).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.layer_norm(np.array([[1.0, 2.0, 3.0, 4.0]]), (4,)).round(3)
    array([[-1.342, -0.447,  0.447,  1.342]])
    """
    size = 1
    for extent in _shape_tuple(normalized_shape):
        size = size * extent
    rows = input.reshape(input.size // size, size)
    mean = np.mean(rows, axis=-1, keepdims=True)
    centered = rows - mean
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    output = centered / np.sqrt(var + eps)
    if weight is not None:
        output = output * weight.reshape(size)
    if bias is not None:
        output = output + bias.reshape(size)
    return output.reshape(input.shape)


def embedding(input, weight):
    """Rows of ``weight`` picked by the integer array ``input``.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.embedding(np.array([2, 0]), np.arange(6.0).reshape(3, 2))
    array([[4., 5.],
           [0., 1.]])
    """
    return weight[input]


def flatten(input):
    """Keep the first axis, flatten the others.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.flatten(np.ones((2, 3, 4))).shape
    (2, 12)
    """
    n = input.shape[0]
    return input.reshape(n, input.size // n)


def one_hot(tensor, num_classes):
    """Integer labels -> an int64 array with a 1 at each label's class.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.one_hot(np.array([0, 2]), 3)
    array([[1, 0, 0],
           [0, 0, 1]])
    """
    return np.where(tensor[:, None] == np.arange(num_classes)[None, :], 1, 0)


def uniform_noise(shape_like, key):
    """Uniform numbers in [0, 1) for each element of ``shape_like``, a function of the integer
    ``key`` and the element's index only (reproducible, counter-based): integer hashing with
    products that stay below 2**62.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> u = F.uniform_noise(np.zeros(1000), 7)
    >>> bool(u.min() >= 0.0 and u.max() < 1.0)
    True
    >>> bool(np.all(u == F.uniform_noise(np.zeros(1000), 7)))  # the same key gives the same numbers
    True
    """
    index = np.arange(shape_like.size)
    h = (index * 7919 + key * 104729 + 12345) % 2147483647
    for _ in range(3):
        h = (h * h + 11) % 2147483647
        h = (h * 48271 + key) % 2147483647
    return (h / 2147483647.0).reshape(shape_like.shape)


def dropout(input, p=0.5, training=True, key=0):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` when
    training; ``key`` (an integer) selects the random mask.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> y = F.dropout(np.ones(8), p=0.5, key=3)
    >>> sorted(set(y.tolist()))
    [0.0, 2.0]
    >>> F.dropout(np.ones(3), p=0.5, training=False)
    array([1., 1., 1.])
    """
    if not training or p == 0.0:
        return input
    keep = uniform_noise(input, key) >= p
    return np.where(keep, input / (1.0 - p), 0.0)
