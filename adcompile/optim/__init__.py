"""Optimizers with PyTorch's update formulas, whose updates run as one compiled program over
all parameters, and learning-rate schedulers."""
from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer, OptimizerError, OptimizerStateError
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "OptimizerError", "OptimizerStateError", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
