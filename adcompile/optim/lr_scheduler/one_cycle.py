"""OneCycleLR: PyTorch's 1cycle policy, stepped after every batch.

The rate rises from ``max_lr / div_factor`` to ``max_lr`` over the first ``pct_start`` of
``total_steps``, then falls to ``initial_lr / final_div_factor`` (``three_phase``: back to
the initial rate first, then down), annealed by cosine or linearly. With
``cycle_momentum`` the momentum (SGD's or RMSprop's ``momentum``, Adam's ``beta1``) moves the
opposite way between ``max_momentum`` and ``base_momentum``. Like the rate, momentum and betas
are run-time inputs of the compiled updates, so cycling them never recompiles.
"""
import math

from .base import LRScheduler, SchedulerError, check_optimizer, per_group


def _anneal_cos(start, end, pct):
    return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)


def _anneal_linear(start, end, pct):
    return (end - start) * pct + start


def _phases(pct_start, total_steps, three_phase):
    """(end step, start rate key, end rate key, start momentum key, end momentum key) per phase."""
    if three_phase:
        return [(float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * total_steps) - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
    return [(float(pct_start * total_steps) - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
            (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]


def _positive_int(name, value):
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise SchedulerError(f"OneCycleLR: {name} must be a positive integer, not {value!r}")
    return value


class OneCycleLR(LRScheduler):
    """The 1cycle policy (``total_steps``, or ``epochs`` and ``steps_per_epoch``); call
    ``step()`` after every batch (``adcompile.fit`` does).

    >>> import numpy as np, adcompile
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=0.1, momentum=0.9)
    >>> scheduler = adcompile.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=10,
    ...                                                      anneal_strategy="linear")
    >>> rates, momenta = [], []
    >>> for batch in range(10):
    ...     rates.append(round(scheduler.get_last_lr()[0], 4))
    ...     momenta.append(round(opt.param_groups[0]["momentum"], 4))
    ...     scheduler.step()
    >>> rates  # up for 30% of the steps, then down to max_lr / div_factor / final_div_factor
    [0.04, 0.52, 1.0, 0.8571, 0.7143, 0.5714, 0.4286, 0.2857, 0.1429, 0.0]
    >>> momenta  # the opposite way
    [0.95, 0.9, 0.85, 0.8643, 0.8786, 0.8929, 0.9071, 0.9214, 0.9357, 0.95]
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95,
                 div_factor=25.0, final_div_factor=1e4, three_phase=False, last_epoch=-1):
        check_optimizer(optimizer, "OneCycleLR")
        self.optimizer = optimizer
        if total_steps is not None:
            self.total_steps = _positive_int("total_steps", total_steps)
        elif epochs is not None and steps_per_epoch is not None:
            self.total_steps = _positive_int("epochs", epochs) * _positive_int("steps_per_epoch", steps_per_epoch)
        else:
            raise SchedulerError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not isinstance(pct_start, float) or not 0 <= pct_start <= 1:
            raise SchedulerError(f"OneCycleLR: pct_start must be a float between 0 and 1, not {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise SchedulerError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', not {anneal_strategy!r}")
        self._schedule_phases = _phases(pct_start, self.total_steps, three_phase)
        self._anneal_func_type = anneal_strategy
        max_lrs = per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for group, top in zip(optimizer.param_groups, max_lrs):
                group["initial_lr"] = top / div_factor
                group["max_lr"] = top
                group["min_lr"] = group["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise SchedulerError(f"OneCycleLR: {type(optimizer).__name__} has no momentum or betas to cycle; "
                                     "pass cycle_momentum=False")
            self.use_beta1 = "betas" in optimizer.defaults
            tops = per_group("max_momentum", optimizer, max_momentum)
            bases = per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for group, top, base in zip(optimizer.param_groups, tops, bases):
                    self._set_momentum(group, top)
                    group["max_momentum"], group["base_momentum"] = top, base
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group, value):
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def get_lr(self):
        anneal = _anneal_cos if self._anneal_func_type == "cos" else _anneal_linear
        step = self.last_epoch
        if step > self.total_steps:
            raise SchedulerError(f"OneCycleLR stepped {step} times, past its total_steps={self.total_steps}")
        rates = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for k, (end_step, start_lr, end_lr, start_momentum, end_momentum) in enumerate(self._schedule_phases):
                if step <= end_step or k == last:
                    pct = (step - start_step) / (end_step - start_step)
                    rates.append(anneal(group[start_lr], group[end_lr], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, anneal(group[start_momentum], group[end_momentum], pct))
                    break
                start_step = end_step
        return rates
