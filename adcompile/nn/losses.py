"""Loss functions (``reduction='mean' | 'sum' | 'none'``), with PyTorch's definitions."""
import numpy as np


def _reduce(losses, reduction):
    if reduction == "mean":
        return np.mean(losses)
    if reduction == "sum":
        return np.sum(losses)
    return losses


def mse_loss(input, target, reduction="mean"):
    diff = input - target
    return _reduce(diff * diff, reduction)


def l1_loss(input, target, reduction="mean"):
    return _reduce(np.abs(input - target), reduction)


def nll_loss(input, target, reduction="mean"):
    """``input`` holds log-probabilities (N, C); ``target`` integer classes (N,)."""
    picked = input[np.arange(input.shape[0]), target]
    return _reduce(-picked, reduction)


def cross_entropy(input, target, reduction="mean"):
    """Softmax cross entropy of logits (N, C) against integer classes (N,), computed from a
    shifted log-sum-exp (stable for large logits)."""
    shifted = input - np.max(input, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return nll_loss(log_probs, target, reduction)


def binary_cross_entropy(input, target, reduction="mean"):
    """``input`` holds probabilities; each log is clamped at -100, as PyTorch does."""
    log_p = np.maximum(np.log(input), -100.0)
    log_q = np.maximum(np.log(1.0 - input), -100.0)
    return _reduce(-(target * log_p + (1.0 - target) * log_q), reduction)


def binary_cross_entropy_with_logits(input, target, reduction="mean"):
    """``max(x, 0) - x * t + log(1 + exp(-|x|))``: stable for any logit."""
    losses = np.maximum(input, 0.0) - input * target + np.log1p(np.exp(-np.abs(input)))
    return _reduce(losses, reduction)
