"""SequentialLR: run one scheduler after another, switching at the milestones (PyTorch's
semantics: at a milestone the next scheduler starts from epoch 0 with its closed form)."""
from bisect import bisect_right

from .plateau import ReduceLROnPlateau
from .base import LRScheduler, SchedulerError, check_optimizer


class SequentialLR(LRScheduler):
    """``schedulers[k]`` runs from ``milestones[k - 1]`` to ``milestones[k]``.

    >>> import numpy as np, adcompile
    >>> from adcompile.optim import lr_scheduler
    >>> opt = adcompile.optim.SGD([adcompile.Parameter(np.zeros(2))], lr=1.0)
    >>> warmup = lr_scheduler.LinearLR(opt, start_factor=0.5, total_iters=2)
    >>> decay = lr_scheduler.ExponentialLR(opt, gamma=0.5)
    >>> scheduler = lr_scheduler.SequentialLR(opt, schedulers=[warmup, decay], milestones=[2])
    >>> rates = []
    >>> for epoch in range(5):
    ...     rates.append(scheduler.get_last_lr()[0])
    ...     scheduler.step()
    >>> rates  # warm up for two epochs, then halve each epoch
    [0.5, 0.75, 1.0, 0.5, 0.25]
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        check_optimizer(optimizer, "SequentialLR")
        schedulers, milestones = list(schedulers), list(milestones)
        if not schedulers:
            raise SchedulerError("SequentialLR needs at least one scheduler")
        for k, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise SchedulerError(f"SequentialLR cannot run ReduceLROnPlateau (schedulers[{k}]): its step "
                                     "needs the monitored quantity")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise SchedulerError(f"SequentialLR: schedulers[{k}] ({type(scheduler).__name__}) belongs to another "
                                     "optimizer; all must share the one given")
        if len(milestones) != len(schedulers) - 1:
            raise SchedulerError(f"SequentialLR needs one milestone fewer than schedulers: {len(schedulers)} "
                                 f"schedulers, {len(milestones)} milestones")
        self._schedulers, self._milestones = schedulers, milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo_steps(self)  # the schedulers took their first step when built
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def _undo_steps(self, scheduler):
        if hasattr(scheduler, "_schedulers"):
            for inner in scheduler._schedulers:
                self._undo_steps(inner)
        elif hasattr(scheduler, "last_epoch"):
            scheduler.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        k = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[k]
        if k > 0 and self._milestones[k - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self):
        state = {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [scheduler.state_dict() for scheduler in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for scheduler, inner in zip(self._schedulers, saved):
            scheduler.load_state_dict(inner)
