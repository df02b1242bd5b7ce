"""LayerNorm over one or several trailing axes (``normalized_shape`` an int or a tuple, as PyTorch)."""
import numpy as np

from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional as F


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
