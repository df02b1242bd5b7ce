"""ReduceLROnPlateau: multiply the rates by ``factor`` when a monitored quantity (a
validation loss, usually) has not improved for ``patience`` epochs, with PyTorch's
thresholds, cooldown, ``min_lr`` and ``eps``. ``step(metric)`` takes the quantity;
``adcompile.fit`` passes the epoch's validation loss, or its training loss without one."""
import math

from .base import LRScheduler, SchedulerError, check_optimizer, current_lrs, per_group


class ReduceLROnPlateau(LRScheduler):
    """Reduce the rates when ``metric`` stops improving.

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=1.0)
    >>> scheduler = adcompile.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    >>> rates = []
    >>> for val_loss in [3.0, 2.0, 2.5, 2.4, 2.3, 2.2]:
    ...     scheduler.step(val_loss)
    ...     rates.append(scheduler.get_last_lr()[0])
    >>> rates  # halved after two epochs without a new best (2.0), and again two epochs later
    [1.0, 1.0, 1.0, 0.5, 0.5, 0.25]
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        if factor >= 1.0:
            raise SchedulerError(f"ReduceLROnPlateau: factor must be < 1.0, not {factor}")
        check_optimizer(optimizer, "ReduceLROnPlateau")
        self.factor = factor
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            self.min_lrs = per_group("min_lr", optimizer, min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = current_lrs(optimizer)
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Record this epoch's ``metrics`` (a number); reduce the rates after ``patience`` bad epochs."""
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in the cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = current_lrs(self.optimizer)

    def _reduce_lr(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise SchedulerError(f"ReduceLROnPlateau: the optimizer has {len(groups)} parameter groups but "
                                     f"min_lr has {len(self.min_lrs)} values; set scheduler.min_lrs to match")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise SchedulerError(f"ReduceLROnPlateau: mode must be 'min' or 'max', not {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise SchedulerError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', not {threshold_mode!r}")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
