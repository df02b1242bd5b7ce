"""Adam and AdamW (decoupled weight decay), optionally AMSGrad, with PyTorch's update
formulas (``torch.optim.Adam`` / ``torch.optim.AdamW``)."""
import numpy as np

from .hyperparameters import BETAS, NON_NEGATIVE
from .optimizer import Optimizer


def adam_update(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, hyper, amsgrad, maximize, decoupled):
    lr, beta1, beta2, eps, weight_decay = hyper[0], hyper[1], hyper[2], hyper[3], hyper[4]
    g = -grad if maximize else grad
    step[0] += 1.0
    t = step[0]
    if weight_decay != 0.0:
        if decoupled:
            param *= 1.0 - lr * weight_decay
        else:
            g = g + weight_decay * param
    exp_avg[...] = beta1 * exp_avg + (1.0 - beta1) * g
    exp_avg_sq[...] = beta2 * exp_avg_sq + (1.0 - beta2) * g * g
    bias_correction1 = 1.0 - beta1 ** t
    bias_correction2_sqrt = np.sqrt(1.0 - beta2 ** t)
    step_size = lr / bias_correction1
    if amsgrad:
        max_exp_avg_sq[...] = np.maximum(max_exp_avg_sq, exp_avg_sq)
        denom = np.sqrt(max_exp_avg_sq) / bias_correction2_sqrt + eps
    else:
        denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
    param -= step_size * exp_avg / denom


class Adam(Optimizer):
    """Adam with PyTorch's ``torch.optim.Adam`` update (bias correction, weight decay added to the
    gradient, amsgrad, maximize); ``step()`` updates every parameter with a ``.grad``.

    >>> import numpy as np, adcompile
    >>> w = adcompile.Parameter(np.array([1.0, -2.0]))
    >>> opt = adcompile.optim.Adam([w], lr=0.1)
    >>> opt.backend = "python"  # run the update as generated Python, without numba
    >>> w.grad = np.array([0.5, -3.0])
    >>> opt.step()  # the first step moves each parameter by about lr against its gradient's sign
    >>> np.round(w.data, 6)
    array([ 0.9, -1.9])
    """

    update = staticmethod(adam_update)
    state_names = ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")
    flag_names = ("amsgrad", "maximize", "decoupled_weight_decay")
    hyper_rules = {"lr": NON_NEGATIVE, "betas": BETAS, "eps": NON_NEGATIVE, "weight_decay": NON_NEGATIVE}

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False,
                 maximize=False):
        super().__init__(params, self._defaults(lr, betas, eps, weight_decay, amsgrad, maximize, False))

    @staticmethod
    def _defaults(lr, betas, eps, weight_decay, amsgrad, maximize, decoupled):
        betas = tuple(betas) if isinstance(betas, (tuple, list)) else betas  # not a pair: checked later
        return dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                    maximize=maximize, decoupled_weight_decay=decoupled)

    def hyper_values(self, group):
        beta1, beta2 = group["betas"]
        return [group["lr"], beta1, beta2, group["eps"], group["weight_decay"]]


class AdamW(Adam):
    """Adam with decoupled weight decay: ``param *= 1 - lr * weight_decay`` before the step.

    >>> import numpy as np, adcompile
    >>> w = adcompile.Parameter(np.array([1.0, -2.0]))
    >>> opt = adcompile.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> opt.backend = "python"  # run the update as generated Python, without numba
    >>> w.grad = np.array([1.0, -1.0])
    >>> opt.step()
    >>> w.data  # (1 - lr * weight_decay) * w, then Adam's first step moves each entry by lr
    array([ 0.85, -1.8 ])
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False,
                 maximize=False):
        Optimizer.__init__(self, params, self._defaults(lr, betas, eps, weight_decay, amsgrad, maximize, True))
