"""Schedulers given by factors: LambdaLR (``base * f(epoch)``), MultiplicativeLR
(``lr * f(epoch)`` each step) and LinearLR (a linear ramp of the factor), with PyTorch's
formulas and state dicts."""
import types

from .base import LRScheduler, SchedulerError, current_lrs, per_group


def _lambdas(optimizer, lr_lambda):
    lambdas = per_group("lr_lambda", optimizer, lr_lambda)
    for function in lambdas:
        if not callable(function):
            raise SchedulerError(f"lr_lambda must be a function of the epoch, not {type(function).__name__}")
    return lambdas


class _LambdaState:
    """PyTorch's state dict of the lambda schedulers: plain functions are not saved (they are
    code); a callable object's attributes are."""

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else dict(fn.__dict__)
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attributes in zip(self.lr_lambdas, saved):
            if attributes is not None:
                fn.__dict__.update(attributes)


class LambdaLR(_LambdaState, LRScheduler):
    """``lr = base * lr_lambda(epoch)`` (one function, or one per parameter group).

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=0.5)
    >>> scheduler = adcompile.optim.lr_scheduler.LambdaLR(opt, lr_lambda=lambda epoch: 1 / (epoch + 1))
    >>> rates = []
    >>> for epoch in range(4):
    ...     rates.append(scheduler.get_last_lr()[0])
    ...     scheduler.step()
    >>> rates
    [0.5, 0.25, 0.16666666666666666, 0.125]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * fn(self.last_epoch) for fn, base in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """``lr = lr * lr_lambda(epoch)`` at each step after the first.

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=1.0)
    >>> scheduler = adcompile.optim.lr_scheduler.MultiplicativeLR(opt, lr_lambda=lambda epoch: 0.5)
    >>> scheduler.step(); scheduler.step()
    >>> scheduler.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return current_lrs(self.optimizer)
        return [group["lr"] * fn(self.last_epoch) for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]


class LinearLR(LRScheduler):
    """The factor goes linearly from ``start_factor`` to ``end_factor`` over ``total_iters``
    steps: ``lr = base * (start + (end - start) * min(epoch, total_iters) / total_iters)``
    (computed from the current rate, as PyTorch does).

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=1.0)
    >>> scheduler = adcompile.optim.lr_scheduler.LinearLR(opt, start_factor=0.25, total_iters=3)
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(scheduler.get_last_lr()[0])
    ...     scheduler.step()
    >>> rates
    [0.25, 0.5, 0.75, 1.0, 1.0]
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        if not 0 < start_factor <= 1:
            raise SchedulerError(f"LinearLR: start_factor must be in (0, 1], not {start_factor}")
        if not 0 <= end_factor <= 1:
            raise SchedulerError(f"LinearLR: end_factor must be in [0, 1], not {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return current_lrs(self.optimizer)
        change = self.end_factor - self.start_factor
        return [group["lr"] * (1.0 + change / (self.total_iters * self.start_factor + (self.last_epoch - 1) * change))
                for group in groups]

    def _get_closed_form_lr(self):
        return [base * (self.start_factor + (self.end_factor - self.start_factor)
                        * min(self.total_iters, self.last_epoch) / self.total_iters) for base in self.base_lrs]
