"""Max and average pooling, 1d and 2d: ``kernel_size``, ``stride`` (default: the kernel size) and
``padding`` an int or a tuple per spatial axis, as PyTorch."""
from ..modules.module import Module
from . import functional as F
from .functional.conv import _ntuple, _pool_padding, _pool_stride


class _Pool(Module):
    _dims = 1

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n = self._dims
        kernel = _ntuple(kernel_size, n, "kernel_size")  # checked here, so a bad value fails at construction
        _pool_stride(stride, kernel, n)
        _pool_padding(padding, kernel, n)
        self.kernel_size = kernel_size if isinstance(kernel_size, int) else kernel  # as given, as PyTorch
        self.stride = self.kernel_size if stride is None else (stride if isinstance(stride, int) else tuple(stride))
        self.padding = padding if isinstance(padding, int) else tuple(padding)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool1d(_Pool):
    """Maximum over windows along the last axis (``F.max_pool1d``; ``stride`` defaults to ``kernel_size``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.MaxPool1d(2).compile("python")(np.array([[[1.0, 3.0, 2.0, 5.0]]]))
    array([[[3., 5.]]])
    """

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding)


class AvgPool1d(_Pool):
    """Mean over windows along the last axis (``F.avg_pool1d``; ``stride`` defaults to ``kernel_size``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.AvgPool1d(2).compile("python")(np.array([[[1.0, 3.0, 2.0, 5.0]]]))
    array([[[2. , 3.5]]])
    """

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding)


class MaxPool2d(_Pool):
    """Maximum over windows of the last two axes (``F.max_pool2d``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.MaxPool2d(2).compile("python")(np.arange(16.0).reshape(1, 1, 4, 4))
    array([[[[ 5.,  7.],
             [13., 15.]]]])
    """

    _dims = 2

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool):
    """Mean over windows of the last two axes (``F.avg_pool2d``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> nn.AvgPool2d(2).compile("python")(np.arange(16.0).reshape(1, 1, 4, 4))
    array([[[[ 2.5,  4.5],
             [10.5, 12.5]]]])
    """

    _dims = 2

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding)
