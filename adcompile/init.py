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
    """Reset the default generator used by initialisers and layers' default initialisation."""
    _default[0] = np.random.default_rng(seed)


def default_generator():
    return _default[0]


def _array(tensor):
    return tensor.data if isinstance(tensor, Parameter) else tensor


def _fill(tensor, values):
    array = _array(tensor)
    array[...] = values
    return tensor


def calculate_fan_in_and_fan_out(tensor):
    shape = np.shape(_array(tensor))
    if len(shape) < 2:
        raise ValueError("fan in and fan out need an array of at least 2 dimensions")
    receptive = int(np.prod(shape[2:])) if len(shape) > 2 else 1
    return shape[1] * receptive, shape[0] * receptive


def calculate_gain(nonlinearity, param=None):
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
    rng = generator or default_generator()
    return _fill(tensor, rng.uniform(a, b, size=np.shape(_array(tensor))))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    rng = generator or default_generator()
    return _fill(tensor, rng.normal(mean, std, size=np.shape(_array(tensor))))


def zeros_(tensor):
    return _fill(tensor, 0.0)


def ones_(tensor):
    return _fill(tensor, 1.0)


def constant_(tensor, value):
    return _fill(tensor, value)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan), generator)
