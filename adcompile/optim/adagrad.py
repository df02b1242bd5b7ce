"""Adagrad with learning-rate decay and weight decay, with PyTorch's update formula
(``torch.optim.Adagrad``)."""
import numpy as np

from .hyperparameters import NON_NEGATIVE
from .optimizer import Optimizer


def adagrad_update(param, grad, state_sum, step, hyper, maximize):
    lr, lr_decay, weight_decay, eps = hyper[0], hyper[1], hyper[2], hyper[3]
    g = -grad if maximize else grad
    step[0] += 1.0
    if weight_decay != 0.0:
        g = g + weight_decay * param
    clr = lr / (1.0 + (step[0] - 1.0) * lr_decay)
    state_sum += g * g
    param -= clr * g / (np.sqrt(state_sum) + eps)


class Adagrad(Optimizer):
    """Adagrad with PyTorch's ``torch.optim.Adagrad`` update (``lr_decay``, ``weight_decay``, ``initial_accumulator_value``).

    >>> import numpy as np, adcompile
    >>> w = adcompile.Parameter(np.array([1.0, -2.0]))
    >>> opt = adcompile.optim.Adagrad([w], lr=0.5)
    >>> opt.backend = "python"  # run the update as generated Python, without numba
    >>> w.grad = np.array([2.0, -1.0])
    >>> opt.step()
    >>> w.data  # the first step moves each entry by lr
    array([ 0.5, -1.5])
    """

    update = staticmethod(adagrad_update)
    state_names = ("sum",)
    flag_names = ("maximize",)
    hyper_rules = dict.fromkeys(("lr", "lr_decay", "weight_decay", "initial_accumulator_value", "eps"), NON_NEGATIVE)

    def __init__(self, params, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
                 maximize=False):
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, eps=eps,
                                      maximize=maximize))

    def initial_state(self, param, group):
        state = super().initial_state(param, group)
        state["sum"][...] = group["initial_accumulator_value"]
        return state

    def hyper_values(self, group):
        return [group["lr"], group["lr_decay"], group["weight_decay"], group["eps"]]
