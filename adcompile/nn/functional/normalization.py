"""Batch and group normalisation as functions of arrays, with PyTorch's formulas.

Both normalise with the *biased* variance (divided by the count) and ``eps`` added under the
square root. ``batch_norm`` in training mode also updates ``running_mean`` and ``running_var``
in place, as ``torch.nn.functional.batch_norm`` does, the variance with the *unbiased*
estimate (divided by count - 1); in a module's compiled code such writes into buffers reach
the module's arrays from its gradient too (``transforms/arguments.py``: state parameters).
"""
import numpy as np

from ...frontend.static_values import static_function


@static_function
def _check_channels(ndim, layer):
    """``ndim``, or an error at compile time when it is not one that ``layer`` takes."""
    allowed = {"batch_norm": (2, 3, 4, 5), "BatchNorm1d": (2, 3), "BatchNorm2d": (4,),
               "group_norm": (2, 3, 4, 5)}[layer]
    if ndim not in allowed:
        shapes = {2: "(N, C)", 3: "(N, C, L)", 4: "(N, C, H, W)", 5: "(N, C, D, H, W)"}
        raise ValueError(f"{layer} expects a {' or '.join(f'{n}-d input {shapes[n]}' for n in allowed)}, "
                         f"got a {ndim}-d input")
    return ndim


def _per_channel(values):
    """``values`` (one per channel) shaped to broadcast against an array (N, C, rest)."""
    return values.reshape(1, values.shape[0], 1)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1,
               eps=1e-5):
    """Normalise each channel (axis 1) of ``input`` (N, C, ...) by its mean and variance over
    the batch and the other axes when ``training`` (or when there are no running statistics),
    else by ``running_mean`` and ``running_var``; then scale by ``weight`` and shift by ``bias``.
    When ``training`` and ``running_mean`` is given, the running statistics become
    ``(1 - momentum) * running + momentum * batch`` (the variance unbiased).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> mean, var = np.zeros(1), np.ones(1)
    >>> F.batch_norm(np.array([[1.0], [3.0]]), mean, var, training=True).round(3)
    array([[-1.],
           [ 1.]])
    >>> mean, var  # 0.9 * (0, 1) + 0.1 * (2, 2), the variance unbiased: 2 = ((1-2)**2 + (3-2)**2) / 1
    (array([0.2]), array([1.1]))
    """
    ndim = _check_channels(input.ndim, "batch_norm")
    n, channels = input.shape[0], input.shape[1]
    x3 = input.reshape(n, channels, input.size // (n * channels))
    if training or running_mean is None:
        assert input.size > channels, "batch_norm: expected more than 1 value per channel when training"
        mean = np.mean(np.mean(x3, axis=2), axis=0)
        centered = x3 - _per_channel(mean)
        var = np.mean(np.mean(centered * centered, axis=2), axis=0)
        if training and running_mean is not None:
            count = input.size // channels
            running_mean[:] = (1.0 - momentum) * running_mean + momentum * mean
            running_var[:] = (1.0 - momentum) * running_var + momentum * (var * (count / (count - 1.0)))
    else:
        centered = x3 - _per_channel(running_mean)
        var = running_var
    output = centered / np.sqrt(_per_channel(var) + eps)
    if weight is not None:
        output = output * _per_channel(weight)
    if bias is not None:
        output = output + _per_channel(bias)
    return output.reshape(input.shape)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Split the channels (axis 1) of ``input`` (N, C, ...) into ``num_groups`` groups and
    normalise each group of each example by its mean and variance; then scale by ``weight``
    and shift by ``bias`` (one per channel).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.group_norm(np.array([[1.0, 3.0, 5.0, 5.0]]), 2).round(3)
    array([[-1.,  1.,  0.,  0.]])
    """
    ndim = _check_channels(input.ndim, "group_norm")
    n, channels = input.shape[0], input.shape[1]
    rows = input.reshape(n, num_groups, input.size // (n * num_groups))
    mean = np.mean(rows, axis=2, keepdims=True)
    centered = rows - mean
    var = np.mean(centered * centered, axis=2, keepdims=True)
    x3 = (centered / np.sqrt(var + eps)).reshape(n, channels, input.size // (n * channels))
    if weight is not None:
        x3 = x3 * _per_channel(weight)
    if bias is not None:
        x3 = x3 + _per_channel(bias)
    return x3.reshape(input.shape)
