"""The epoch-indexed schedulers with a closed form: StepLR, MultiStepLR, ExponentialLR and
CosineAnnealingLR, each computing the next rate the way PyTorch's ``get_lr`` does."""
import math
from bisect import bisect_right
from collections import Counter

from .base import LRScheduler, current_lrs


class StepLR(LRScheduler):
    """``lr = base * gamma ** (epoch // step_size)``.

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=1.0)
    >>> scheduler = adcompile.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(opt.param_groups[0]["lr"])
    ...     scheduler.step()  # after each epoch's optimizer steps
    >>> rates
    [1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return current_lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """``lr = base * gamma ** (number of milestones <= epoch)`` (a milestone listed twice counts twice).

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=1.0)
    >>> scheduler = adcompile.optim.lr_scheduler.MultiStepLR(opt, milestones=[2, 4], gamma=0.5)
    >>> rates = []
    >>> for epoch in range(6):
    ...     rates.append(scheduler.get_last_lr()[0])
    ...     scheduler.step()
    >>> rates
    [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return current_lrs(self.optimizer)
        return [group["lr"] * self.gamma ** self.milestones[self.last_epoch] for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(self.milestones.elements())
        return [base * self.gamma ** bisect_right(milestones, self.last_epoch) for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """``lr = base * gamma ** epoch``.

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=1.0)
    >>> scheduler = adcompile.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> scheduler.step(); scheduler.step()
    >>> scheduler.get_last_lr()
    [0.25]
    """

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return current_lrs(self.optimizer)
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``, computed from
    the current rate as PyTorch does (past ``T_max`` the rate rises again).

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=1.0)
    >>> scheduler = adcompile.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(round(opt.param_groups[0]["lr"], 4))
    ...     scheduler.step()
    >>> rates
    [1.0, 0.8536, 0.5, 0.1464, 0.0]
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial:
            return current_lrs(self.optimizer)
        if self._step_count == 1 and self.last_epoch > 0:
            return self._get_closed_form_lr()
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return [group["lr"] + (base - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
                    for base, group in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * self.last_epoch / self.T_max))
                / (1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max))
                * (group["lr"] - self.eta_min) + self.eta_min for group in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (base - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base in self.base_lrs]
