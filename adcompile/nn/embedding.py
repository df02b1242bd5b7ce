"""Embedding: rows of a trainable table picked by integer indices."""
import numpy as np

from ..modules import init
from ..modules.module import Module
from ..modules.parameter import Parameter
from . import functional as F


class Embedding(Module):
    """A table of ``num_embeddings`` rows of size ``embedding_dim``, indexed by integer arrays (``F.embedding``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> table = nn.Embedding(10, 3).compile("python")
    >>> table(np.array([4, 1, 4])).shape
    (3, 3)
    >>> bool(np.all(table(np.array([4]))[0] == table.weight.data[4]))
    True
    """

    def __init__(self, num_embeddings, embedding_dim, dtype=np.float64, generator=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(np.empty((num_embeddings, embedding_dim), dtype=dtype))
        init.normal_(self.weight, generator=generator)

    def forward(self, input):
        return F.embedding(input, self.weight)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"
