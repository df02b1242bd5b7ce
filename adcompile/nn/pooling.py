"""Max and average pooling, 1d and 2d: ``kernel_size``, ``stride`` (default: the kernel size) and
``padding`` an int or a tuple per spatial axis, as PyTorch."""
from ..module import Module
from . import functional as F
from .conv_functional import _ntuple, _pool_padding, _pool_stride


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
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding)


class AvgPool1d(_Pool):
    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding)


class MaxPool2d(_Pool):
    _dims = 2

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding)


class AvgPool2d(_Pool):
    _dims = 2

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding)
