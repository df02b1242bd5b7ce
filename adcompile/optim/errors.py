"""The errors of the optimizers: bad construction arguments and state files that do not fit."""
from ..errors import AdCompileError
from ..modules.state import StateDictError


class OptimizerError(AdCompileError, ValueError):
    """An optimizer built or loaded with something it cannot use (PyTorch: a ValueError)."""


class OptimizerStateError(StateDictError, OptimizerError):
    """A saved optimizer state (a file or a ``state_dict``) that is malformed or does not fit the
    optimizer: a ``StateDictError``, as a Module's, and an ``OptimizerError`` (a ValueError, as
    PyTorch's ``Optimizer.load_state_dict`` raises)."""
