"""Parameter initialisation in place, as ``torch.nn.init``, with explicit seeded generators.

Every function fills a Parameter (or numpy array) in place and returns it. ``generator`` is a
``numpy.random.Generator``; without one, the module's default generator is used, which
``manual_seed(seed)`` resets (layers' default initialisation draws from it, so
``manual_seed(0)`` before building a model makes it reproducible).
"""
import math

import numpy as np

from .parameter import Parameter

_default = [np.random.default_rng(0)]


def manual_seed(seed):
    """Reset the default generator used by initialisers and layers' default initialisation.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> init.manual_seed(0); a = adcompile.nn.Linear(2, 2).weight.data.copy()
    >>> init.manual_seed(0); b = adcompile.nn.Linear(2, 2).weight.data.copy()
    >>> bool(np.all(a == b))
    True
    """
    _default[0] = np.random.default_rng(seed)


def default_generator():
    """The numpy ``Generator`` initialisers use when given none (reset by ``manual_seed``).

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> type(init.default_generator()).__name__
    'Generator'
    """
    return _default[0]


def _array(tensor):
    return tensor.data if isinstance(tensor, Parameter) else tensor


def _fill(tensor, values):
    array = _array(tensor)
    array[...] = values
    return tensor


def calculate_fan_in_and_fan_out(tensor):
    """``(fan_in, fan_out)`` of a weight, as PyTorch computes them (for a convolution, times the kernel size).

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> init.calculate_fan_in_and_fan_out(np.empty((4, 3)))  # Linear(3, 4).weight
    (3, 4)
    >>> init.calculate_fan_in_and_fan_out(np.empty((8, 2, 3, 3)))  # Conv2d(2, 8, 3).weight
    (18, 72)
    """
    shape = np.shape(_array(tensor))
    if len(shape) < 2:
        raise ValueError("fan in and fan out need an array of at least 2 dimensions")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (PyTorch's table; ``param`` is leaky_relu's slope).

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> init.calculate_gain("tanh"), round(init.calculate_gain("relu"), 4)
    (1.6666666666666667, 1.4142)
    """
    if nonlinearity in ("linear", "conv1d", "conv2d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"unsupported nonlinearity {nonlinearity}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill ``tensor`` (a Parameter or an array) in place with draws from U(a, b); returns it.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> w = adcompile.Parameter(np.empty(100))
    >>> _ = init.uniform_(w, -0.5, 0.5, generator=np.random.default_rng(0))
    >>> bool(w.data.min() >= -0.5 and w.data.max() < 0.5)
    True
    """
    rng = generator or default_generator()
    return _fill(tensor, rng.uniform(a, b, size=np.shape(_array(tensor))))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill ``tensor`` in place with draws from N(mean, std ** 2); returns it.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> w = init.normal_(np.empty(10000), mean=3.0, std=0.1, generator=np.random.default_rng(0))
    >>> round(float(w.mean()), 1)
    3.0
    """
    rng = generator or default_generator()
    return _fill(tensor, rng.normal(mean, std, size=np.shape(_array(tensor))))


def zeros_(tensor):
    """Fill ``tensor`` in place with zeros; returns it.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> init.zeros_(np.ones(3))
    array([0., 0., 0.])
    """
    return _fill(tensor, 0.0)


def ones_(tensor):
    """Fill ``tensor`` in place with ones; returns it.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> init.ones_(np.zeros(3))
    array([1., 1., 1.])
    """
    return _fill(tensor, 1.0)


def constant_(tensor, value):
    """Fill ``tensor`` in place with ``value``; returns it.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> init.constant_(np.zeros(3), 0.5)
    array([0.5, 0.5, 0.5])
    """
    return _fill(tensor, value)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-a, a) with ``a = gain * sqrt(6 / (fan_in + fan_out))``, in place.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> w = init.xavier_uniform_(np.empty((20, 30)), generator=np.random.default_rng(0))
    >>> bool(np.abs(w).max() <= np.sqrt(6 / 50))
    True
    """
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std ** 2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``, in place.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> w = init.xavier_normal_(np.empty((200, 300)), generator=np.random.default_rng(0))
    >>> round(float(w.std() / np.sqrt(2 / 500)), 1)
    1.0
    """
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)`` (``mode`` fan_in or fan_out), in place.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> w = init.kaiming_uniform_(np.empty((20, 30)), nonlinearity="relu", generator=np.random.default_rng(0))
    >>> bool(np.abs(w).max() <= np.sqrt(2.0) * np.sqrt(3 / 30))
    True
    """
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std ** 2) with ``std = gain / sqrt(fan)`` (``mode`` fan_in or fan_out), in place.

    >>> import numpy as np, adcompile
    >>> from adcompile import init
    >>> w = init.kaiming_normal_(np.empty((300, 200)), nonlinearity="relu", generator=np.random.default_rng(0))
    >>> round(float(w.std() / np.sqrt(2 / 200)), 1)
    1.0
    """
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)
