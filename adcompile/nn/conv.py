"""Conv1d and Conv2d with PyTorch's argument forms (``kernel_size``, ``stride``, ``padding`` an int or a
tuple per spatial axis; ``padding`` also ``"valid"`` or ``"same"``) and initialisation."""
import math

import numpy as np

from ..modules import init
from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional as F
from .functional.conv import _conv_padding, _ntuple


class _ConvNd(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, bias, dtype, generator, n):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        kernel_shape = _ntuple(kernel_size, n, "kernel_size")
        self.kernel_size = kernel_shape  # PyTorch's attributes: tuples (padding may stay a string)
        self.stride = _ntuple(stride, n, "stride")
        _conv_padding(padding, stride, n)  # checked here, so a bad value fails at construction
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n, "padding")
        self.weight = Parameter(np.empty((out_channels, in_channels) + kernel_shape, dtype=dtype))
        if bias:
            self.bias = Parameter(np.empty(out_channels, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        init.kaiming_uniform_(self.weight, a=math.sqrt(5), generator=generator)
        if self.bias is not None:
            fan_in, _ = init.calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in)
            init.uniform_(self.bias, -bound, bound, generator)

    def extra_repr(self):
        return (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, padding={self.padding}, bias={self.bias is not None}")


class Conv1d(_ConvNd):
    """1-d convolution (cross-correlation, as PyTorch's): input (N, C_in, L) -> (N, C_out, L_out).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> conv = nn.Conv1d(2, 4, kernel_size=3).compile("python")
    >>> conv.weight.shape
    (4, 2, 3)
    >>> conv(np.ones((5, 2, 10))).shape
    (5, 4, 8)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True, dtype=np.float64,
                 generator=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, bias, dtype, generator, 1)

    def forward(self, input):
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding)


class Conv2d(_ConvNd):
    """2-d convolution (cross-correlation, as PyTorch's): input (N, C_in, H, W) -> (N, C_out, H_out, W_out).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> conv = nn.Conv2d(1, 3, kernel_size=3, padding=1).compile("python")
    >>> conv(np.ones((2, 1, 8, 8))).shape
    (2, 3, 8, 8)
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True, dtype=np.float64,
                 generator=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, bias, dtype, generator, 2)

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding)
