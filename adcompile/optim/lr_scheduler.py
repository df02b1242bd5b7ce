"""Learning-rate schedulers (PyTorch's closed forms): StepLR, ExponentialLR, CosineAnnealingLR.

A scheduler remembers each group's initial learning rate; ``step()`` advances its epoch count
and writes the new rate into ``optimizer.param_groups``. The rate is a run-time input of the
compiled updates, so changing it does not recompile.
"""
import math


class LRScheduler:
    def __init__(self, optimizer, last_epoch=-1):
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def lr_at(self, base_lr, epoch):
        raise NotImplementedError

    def step(self):
        self.last_epoch += 1
        for group, base in zip(self.optimizer.param_groups, self.base_lrs):
            group["lr"] = self.lr_at(base, self.last_epoch)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state):
        self.__dict__.update(state)


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

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** (epoch // self.step_size)


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

    def lr_at(self, base_lr, epoch):
        return base_lr * self.gamma ** epoch


class CosineAnnealingLR(LRScheduler):
    """``lr = eta_min + (base - eta_min) * (1 + cos(pi * epoch / T_max)) / 2``.

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

    def lr_at(self, base_lr, epoch):
        return self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * epoch / self.T_max)) / 2
