"""Learning-rate schedulers with PyTorch's formulas and numbers (``torch.optim.lr_scheduler``):
StepLR, MultiStepLR, ExponentialLR and CosineAnnealingLR (``epoch_schedulers.py``), LambdaLR,
MultiplicativeLR and LinearLR (``factor_schedulers.py``), OneCycleLR (``one_cycle.py``),
ReduceLROnPlateau (``plateau.py``) and SequentialLR (``sequential_lr.py``), on the common
machinery of ``base.py``.

Each has ``step()``, ``get_last_lr()``, ``state_dict()`` and ``load_state_dict()``;
``adcompile.fit`` steps one given as ``scheduler=`` (per epoch, per batch for OneCycleLR).
"""
from .base import LRScheduler, SchedulerError
from .epoch_schedulers import CosineAnnealingLR, ExponentialLR, MultiStepLR, StepLR
from .factor_schedulers import LambdaLR, LinearLR, MultiplicativeLR
from .one_cycle import OneCycleLR
from .plateau import ReduceLROnPlateau
from .sequential_lr import SequentialLR

__all__ = ["LRScheduler", "SchedulerError", "StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
           "LambdaLR", "MultiplicativeLR", "LinearLR", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR"]
