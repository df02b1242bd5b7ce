"""The base of the learning-rate schedulers: PyTorch's ``LRScheduler`` protocol.

A scheduler remembers each group's initial learning rate (``group["initial_lr"]``, kept in
``base_lrs``); ``step()`` advances ``last_epoch`` and writes the new rates into
``optimizer.param_groups``. As in PyTorch, most schedulers compute the new rate from the
current one (the *chainable* form of ``get_lr``), so two schedulers on one optimizer compose
and the numbers are PyTorch's to the last bit; ``step(epoch)`` jumps to ``epoch`` with the
closed form where a scheduler has one. The rate is a run-time input of the compiled updates,
so changing it never recompiles.
"""
from ...errors import AdCompileError

# The options that schedulers keep in an optimizer's parameter groups, as PyTorch's do; a
# saved group may hold them whatever the optimizer (``saving.py``).
SCHEDULER_GROUP_KEYS = frozenset({"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum"})


class SchedulerError(AdCompileError, ValueError):
    """A scheduler built with arguments it cannot use (PyTorch: a ValueError)."""


def per_group(name, optimizer, value):
    """``value`` as one entry per parameter group (a list or tuple must have one per group)."""
    groups = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != groups:
            raise SchedulerError(f"{name} must have one value per parameter group: {len(value)} values "
                                 f"for {groups} group(s)")
        return list(value)
    return [value] * groups


def check_optimizer(optimizer, scheduler_name):
    if not hasattr(optimizer, "param_groups") or not hasattr(optimizer, "defaults"):
        raise SchedulerError(f"{scheduler_name} needs an adcompile.optim optimizer, not "
                             f"{type(optimizer).__name__}")


def current_lrs(optimizer):
    return [group["lr"] for group in optimizer.param_groups]


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` (the rates for ``last_epoch``, usually from
    the current ones) and optionally ``_get_closed_form_lr()``."""

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        check_optimizer(optimizer, type(self).__name__)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for k, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise SchedulerError(f"param_groups[{k}] has no 'initial_lr': resuming a scheduler with "
                                         f"last_epoch={last_epoch} needs the optimizer's state loaded first")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """The step every scheduler takes when built: ``last_epoch`` becomes 0."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance one epoch (or, with ``epoch``, jump to it) and set the groups' rates."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed_form = getattr(self, "_get_closed_form_lr", None)
            values = closed_form() if closed_form is not None else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = current_lrs(self.optimizer)

    def get_last_lr(self):
        """The rates the last ``step()`` set, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self):
        """Everything but the optimizer (PyTorch's layout)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
