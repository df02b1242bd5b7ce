"""Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay,
with PyTorch's update formula (``torch.optim.SGD``)."""
from .hyperparameters import NON_NEGATIVE, REAL
from .optimizer import Optimizer, OptimizerError


def sgd_update(param, grad, momentum_buffer, step, hyper, nesterov, maximize):
    lr, momentum, dampening, weight_decay = hyper[0], hyper[1], hyper[2], hyper[3]
    d_p = -grad if maximize else grad
    if weight_decay != 0.0:
        d_p = d_p + weight_decay * param
    if momentum != 0.0:
        if step[0] == 0.0:
            momentum_buffer[...] = d_p
        else:
            momentum_buffer[...] = momentum * momentum_buffer + (1.0 - dampening) * d_p
        if nesterov:
            d_p = d_p + momentum * momentum_buffer
        else:
            d_p = momentum_buffer
    step[0] += 1.0
    param -= lr * d_p


class SGD(Optimizer):
    """Stochastic gradient descent with PyTorch's ``torch.optim.SGD`` update (momentum, dampening,
    Nesterov momentum, weight decay, maximize); ``step()`` updates every parameter with a ``.grad``.

    >>> import numpy as np, adcompile
    >>> w = adcompile.Parameter(np.array([1.0, -2.0]))
    >>> opt = adcompile.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> opt.backend = "python"  # run the update as generated Python, without numba
    >>> w.grad = np.array([1.0, 1.0])
    >>> opt.step()
    >>> w.data
    array([ 0.9, -2.1])
    """

    update = staticmethod(sgd_update)
    state_names = ("momentum_buffer",)
    flag_names = ("nesterov", "maximize")
    hyper_rules = {"lr": NON_NEGATIVE, "momentum": NON_NEGATIVE, "dampening": REAL, "weight_decay": NON_NEGATIVE}

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False,
                 maximize=False):
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))

    def check_group(self, group):
        super().check_group(group)
        if group["nesterov"] and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise OptimizerError("Nesterov momentum requires a momentum and zero dampening")

    def hyper_values(self, group):
        return [group["lr"], group["momentum"], group["dampening"], group["weight_decay"]]
