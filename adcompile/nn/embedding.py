"""Embedding: rows of a trainable table picked by integer indices."""
import numpy as np

from .. import init
from ..module import Module
from ..parameter import Parameter
from . import functional as F


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, dtype=np.float64, generator=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.weight = Parameter(np.empty((num_embeddings, embedding_dim), dtype=dtype))
        init.normal_(self.weight, generator=generator)

    def forward(self, input):
        return F.embedding(input, self.weight)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"
