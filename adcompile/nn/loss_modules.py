"""Losses as modules (``nn.CrossEntropyLoss()(logits, labels)``), wrapping ``nn/functional/losses.py``."""
from ..modules.module import Module
from .functional import losses


class _Loss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        if reduction not in ("mean", "sum", "none"):
            raise ValueError(f"reduction must be 'mean', 'sum' or 'none', not {reduction!r}")
        self.reduction = reduction


class MSELoss(_Loss):
    """Mean squared error (``F.mse_loss``); ``reduction`` is "mean", "sum" or "none".

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> loss = nn.MSELoss().compile("python")
    >>> float(loss(np.array([1.0, 2.0]), np.array([1.0, 4.0])))
    2.0
    >>> nn.MSELoss(reduction="none").compile("python")(np.array([1.0, 2.0]), np.array([1.0, 4.0]))
    array([0., 4.])
    """

    def forward(self, input, target):
        return losses.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """Mean absolute error (``F.l1_loss``); ``reduction`` is "mean", "sum" or "none".

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> float(nn.L1Loss().compile("python")(np.array([1.0, 2.0]), np.array([1.0, 4.0])))
    1.0
    """

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
    """Negative log-likelihood of log-probabilities ``input`` (N, C) at integer classes ``target`` (N,) (``F.nll_loss``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> log_probs = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    >>> round(float(nn.NLLLoss().compile("python")(log_probs, np.array([0, 1]))), 4)  # -(log 0.5 + log 0.75) / 2
    0.4904
    """

    def forward(self, input, target):
        return losses.nll_loss(input, target, self.reduction)


class BCELoss(_Loss):
    """Binary cross entropy of probabilities ``input`` and targets in [0, 1] (``F.binary_cross_entropy``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> round(float(nn.BCELoss().compile("python")(np.array([0.5, 0.9]), np.array([1.0, 0.0]))), 4)
    1.4979
    """

    def forward(self, input, target):
        return losses.binary_cross_entropy(input, target, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits ``input`` (the sigmoid applied stably; ``F.binary_cross_entropy_with_logits``).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> round(float(nn.BCEWithLogitsLoss().compile("python")(np.array([0.0, 2.0]), np.array([1.0, 0.0]))), 4)
    1.41
    """

    def forward(self, input, target):
        return losses.binary_cross_entropy_with_logits(input, target, self.reduction)
