"""RMSprop (optionally centered, with momentum), with PyTorch's update formula
(``torch.optim.RMSprop``)."""
import numpy as np

from .hyperparameters import NON_NEGATIVE
from .optimizer import Optimizer


def rmsprop_update(param, grad, square_avg, momentum_buffer, grad_avg, step, hyper, centered, maximize):
    lr, alpha, eps, weight_decay, momentum = hyper[0], hyper[1], hyper[2], hyper[3], hyper[4]
    g = -grad if maximize else grad
    step[0] += 1.0
    if weight_decay != 0.0:
        g = g + weight_decay * param
    square_avg[...] = alpha * square_avg + (1.0 - alpha) * g * g
    if centered:
        grad_avg[...] = alpha * grad_avg + (1.0 - alpha) * g
        avg = np.sqrt(square_avg - grad_avg * grad_avg) + eps
    else:
        avg = np.sqrt(square_avg) + eps
    if momentum > 0.0:
        momentum_buffer[...] = momentum * momentum_buffer + g / avg
        param -= lr * momentum_buffer
    else:
        param -= lr * (g / avg)


class RMSprop(Optimizer):
    """RMSprop with PyTorch's ``torch.optim.RMSprop`` update (``alpha`` the smoothing constant, optionally ``centered`` and with ``momentum``).

    >>> import numpy as np, adcompile
    >>> w = adcompile.Parameter(np.array([1.0, -2.0]))
    >>> opt = adcompile.optim.RMSprop([w], lr=0.01)
    >>> opt.backend = "python"  # run the update as generated Python, without numba
    >>> w.grad = np.array([1.0, -1.0])
    >>> opt.step()
    >>> w.data.round(4)  # each entry moves by lr / sqrt(1 - alpha) = 0.1 on the first step
    array([ 0.9, -1.9])
    """

    update = staticmethod(rmsprop_update)
    state_names = ("square_avg", "momentum_buffer", "grad_avg")
    flag_names = ("centered", "maximize")
    hyper_rules = dict.fromkeys(("lr", "alpha", "eps", "weight_decay", "momentum"), NON_NEGATIVE)

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
                 maximize=False):
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                                      centered=centered, maximize=maximize))

    def hyper_values(self, group):
        return [group["lr"], group["alpha"], group["eps"], group["weight_decay"], group["momentum"]]
