"""LayerNorm over the last axis."""
import numpy as np

from ..module import Module
from ..parameter import Parameter
from . import functional as F


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, dtype=np.float64):
        super().__init__()
        size = normalized_shape if isinstance(normalized_shape, int) else tuple(normalized_shape)
        if not isinstance(size, int):
            if len(size) != 1:
                raise ValueError("LayerNorm normalises over the last axis only: normalized_shape is an int")
            size = size[0]
        self.normalized_shape = (size,)
        self.size = size
        self.eps = eps
        if elementwise_affine:
            self.weight = Parameter(np.ones(size, dtype=dtype))
            self.bias = Parameter(np.zeros(size, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):
        return F.layer_norm(input, self.size, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.weight is not None}"
