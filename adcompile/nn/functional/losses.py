"""Loss functions (``reduction='mean' | 'sum' | 'none'``), with PyTorch's definitions."""
import numpy as np


def _reduce(losses, reduction):
    if reduction == "mean":
        return np.mean(losses)
    if reduction == "sum":
        return np.sum(losses)
    return losses


def mse_loss(input, target, reduction="mean"):
    """Mean squared error; ``reduction`` is "mean", "sum" or "none".

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> float(F.mse_loss(np.array([1.0, 2.0]), np.array([1.0, 4.0])))
    2.0
    >>> F.mse_loss(np.array([1.0, 2.0]), np.array([1.0, 4.0]), reduction="none")
    array([0., 4.])
    """
    diff = input - target
    return _reduce(diff * diff, reduction)


def l1_loss(input, target, reduction="mean"):
    """Mean absolute error; ``reduction`` is "mean", "sum" or "none".

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> float(F.l1_loss(np.array([1.0, 2.0]), np.array([1.0, 4.0]), reduction="sum"))
    2.0
    """
    return _reduce(np.abs(input - target), reduction)


def nll_loss(input, target, reduction="mean"):
    """``input`` holds log-probabilities (N, C); ``target`` integer classes (N,).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> log_probs = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    >>> round(float(F.nll_loss(log_probs, np.array([0, 1]))), 4)  # -(log 0.5 + log 0.75) / 2
    0.4904
    """
    picked = input[np.arange(input.shape[0]), target]
    return _reduce(-picked, reduction)


def cross_entropy(input, target, reduction="mean"):
    """Softmax cross entropy of logits (N, C) against integer classes (N,), computed from a
    shifted log-sum-exp (stable for large logits).

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> logits = np.array([[2.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    >>> round(float(F.cross_entropy(logits, np.array([0, 2]))), 4)
    0.6691
    """
    shifted = input - np.max(input, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return nll_loss(log_probs, target, reduction)


def binary_cross_entropy(input, target, reduction="mean"):
    """``input`` holds probabilities; each log is clamped at -100, as PyTorch does.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> round(float(F.binary_cross_entropy(np.array([0.5, 0.9]), np.array([1.0, 0.0]))), 4)
    1.4979
    """
    log_p = np.maximum(np.log(input), -100.0)
    log_q = np.maximum(np.log(1.0 - input), -100.0)
    return _reduce(-(target * log_p + (1.0 - target) * log_q), reduction)


def binary_cross_entropy_with_logits(input, target, reduction="mean"):
    """``max(x, 0) - x * t + log(1 + exp(-|x|))``: stable for any logit.

    >>> import numpy as np, adcompile
    >>> from adcompile.nn import functional as F
    >>> F.binary_cross_entropy_with_logits(np.array([0.0, 800.0]), np.array([1.0, 1.0]), reduction="none").round(4)
    array([0.6931, 0.    ])
    """
    losses = np.maximum(input, 0.0) - input * target + np.log1p(np.exp(-np.abs(input)))
    return _reduce(losses, reduction)
