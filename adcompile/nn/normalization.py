"""Normalisation layers with PyTorch's arguments, parameters and buffers: LayerNorm over one or
several trailing axes (``normalized_shape`` an int or a tuple), BatchNorm1d and BatchNorm2d
(running statistics as buffers that the compiled forward, and its gradient in a training step,
update), GroupNorm."""
import numpy as np

from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional as F
from .functional.normalization import _check_channels


class LayerNorm(Module):
    """``LayerNorm(6)`` normalises the last axis; ``LayerNorm((3, 4))`` the last two (weight and
    bias of shape (3, 4)).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> norm = nn.LayerNorm(4).compile("python")  # weight ones, bias zeros
    >>> norm(np.array([[1.0, 2.0, 3.0, 4.0]])).round(3)
    array([[-1.342, -0.447,  0.447,  1.342]])
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, dtype=np.float64):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if not shape or not all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in shape):
            raise ValueError(f"normalized_shape must be a positive int or a non-empty tuple of them, "
                             f"not {normalized_shape!r}")
        self.normalized_shape = shape
        self.eps = eps
        if elementwise_affine:
            self.weight = Parameter(np.ones(shape, dtype=dtype))
            self.bias = Parameter(np.zeros(shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"


class _BatchNorm(Module):
    """PyTorch's BatchNorm: ``weight`` and ``bias`` per channel (``affine``), the buffers
    ``running_mean``, ``running_var`` and ``num_batches_tracked`` (``track_running_stats``)."""

    _layer = "batch_norm"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 dtype=np.float64):
        super().__init__()
        if not isinstance(num_features, int) or isinstance(num_features, bool) or num_features < 1:
            raise ValueError(f"num_features must be a positive int, not {num_features!r}")
        if momentum is not None and not 0.0 <= momentum <= 1.0:
            raise ValueError(f"momentum must be in [0, 1] or None (a cumulative average), not {momentum!r}")
        self.num_features = num_features
        self.eps = float(eps)
        self.momentum = None if momentum is None else float(momentum)
        self.affine = bool(affine)
        self.track_running_stats = bool(track_running_stats)
        if affine:
            self.weight = Parameter(np.ones(num_features, dtype=dtype))
            self.bias = Parameter(np.zeros(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", np.zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", np.ones(num_features, dtype=dtype))
            # PyTorch's is a 0-d tensor; compiled code writes into arrays of at least one axis
            self.register_buffer("num_batches_tracked", np.zeros(1, dtype=np.int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        if self.track_running_stats:
            self.running_mean[...] = 0.0
            self.running_var[...] = 1.0
            self.num_batches_tracked[...] = 0

    def forward(self, input):
        checked_ndim = _check_channels(input.ndim, self._layer)  # noqa: F841 (a clear error for the wrong rank)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked[0] += 1
            if self.momentum is None:  # the cumulative average of the batch statistics
                factor = 1.0 / self.num_batches_tracked[0]
        use_batch_stats = self.training or not self.track_running_stats
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            use_batch_stats, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input per channel C, as ``torch.nn.BatchNorm1d``:
    in training mode by the batch's mean and (biased) variance, also updating the running
    statistics (``momentum`` 0.1; None for a cumulative average; the variance unbiased), and in
    evaluation mode (``model.eval()``) by the running statistics.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> bn = nn.BatchNorm1d(2).compile("python")
    >>> bn(np.array([[1.0, 0.0], [3.0, 4.0]])).round(3)
    array([[-1., -1.],
           [ 1.,  1.]])
    >>> bn.running_mean, bn.running_var, bn.num_batches_tracked
    (array([0.2, 0.2]), array([1.1, 1.7]), array([1]))
    >>> _ = bn.eval()
    >>> bn(np.array([[0.2, 0.2]]))
    array([[0., 0.]])
    """

    _layer = "BatchNorm1d"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input per channel C, as ``torch.nn.BatchNorm2d`` (the
    statistics over N, H and W; see ``BatchNorm1d``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> bn = nn.BatchNorm2d(3).compile("python")
    >>> y = bn(np.arange(48.0).reshape(2, 3, 2, 4))
    >>> y.shape, bool(abs(y[:, 0].mean()) < 1e-12)
    ((2, 3, 2, 4), True)
    """

    _layer = "BatchNorm2d"


class GroupNorm(Module):
    """Normalise (N, C, ...) input over groups of ``num_channels // num_groups`` channels per
    example, as ``torch.nn.GroupNorm``; ``weight`` and ``bias`` per channel (``affine``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> gn = nn.GroupNorm(2, 4).compile("python")
    >>> gn(np.array([[1.0, 3.0, 5.0, 5.0]])).round(3)
    array([[-1.,  1.,  0.,  0.]])
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, dtype=np.float64):
        super().__init__()
        if num_groups < 1 or num_channels % num_groups:
            raise ValueError(f"num_channels must be divisible by num_groups (got {num_channels} channels "
                             f"in {num_groups} groups)")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps = float(eps)
        self.affine = bool(affine)
        if affine:
            self.weight = Parameter(np.ones(num_channels, dtype=dtype))
            self.bias = Parameter(np.zeros(num_channels, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}"
