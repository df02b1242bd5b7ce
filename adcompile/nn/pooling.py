"""Max and average pooling, 1d and 2d (square windows; stride defaults to the window)."""
from ..module import Module
from . import functional as F


class _Pool(Module):
    def __init__(self, kernel_size, stride=None):
        super().__init__()
        self.kernel_size = int(kernel_size)
        self.stride = self.kernel_size if stride is None else int(stride)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}"


class MaxPool1d(_Pool):
    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride)


class AvgPool1d(_Pool):
    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride)


class MaxPool2d(_Pool):
    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride)


class AvgPool2d(_Pool):
    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride)
