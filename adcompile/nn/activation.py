"""Activation layers: ReLU, Tanh, Sigmoid, GELU, Softmax and LogSoftmax."""
from ..module import Module
from . import functional as F


class ReLU(Module):
    def forward(self, input):
        return F.relu(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate='{self.approximate}'"


class Softmax(Module):
    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)
