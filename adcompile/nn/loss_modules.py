"""Losses as modules (``nn.CrossEntropyLoss()(logits, labels)``), wrapping ``nn/losses.py``."""
from ..module import Module
from . import losses


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
        self.reduction = reduction


class MSELoss(_Loss):
    def forward(self, input, target):
        return losses.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):
        return losses.l1_loss(input, target, self.reduction)


class CrossEntropyLoss(_Loss):
    """The cross entropy of logits ``input`` (N, C) and class indices ``target`` (N,): ``F.cross_entropy``.

    >>> import numpy as np, adcompile
    >>> loss = adcompile.nn.CrossEntropyLoss().compile("python")  # the generated Python, not numba
    >>> logits, labels = np.array([[0.0, 0.0], [np.log(3.0), 0.0]]), np.array([0, 0])
    >>> round(float(loss(logits, labels)), 6)  # mean of -log(1/2) and -log(3/4)
    0.490415
    """

    def forward(self, input, target):
        return losses.cross_entropy(input, target, self.reduction)


class NLLLoss(_Loss):
    def forward(self, input, target):
        return losses.nll_loss(input, target, self.reduction)


class BCELoss(_Loss):
    def forward(self, input, target):
        return losses.binary_cross_entropy(input, target, self.reduction)


class BCEWithLogitsLoss(_Loss):
    def forward(self, input, target):
        return losses.binary_cross_entropy_with_logits(input, target, self.reduction)
