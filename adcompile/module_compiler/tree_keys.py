"""What compiled code of a Module depends on besides its arrays: ``module_key`` (classes, plain
attributes, ``training``, which parameters and buffers are present) and ``TreeStamp``, the cheap
check that a module tree is still as it was when something was compiled for it."""
import numpy as np

from ..modules.module import tree_version


def _plain_key(value):
    if value is None or isinstance(value, (bool, int, float, str, np.integer, np.floating)):
        return type(value), value
    if isinstance(value, (tuple, list)):
        return type(value), tuple(_plain_key(v) for v in value)
    return type(value), id(value)  # arrays, functions, other objects: by identity


_REGISTRIES = ("_parameters", "_buffers", "_non_persistent", "_modules", "training")


def module_key(module):
    """Everything compiled code of ``module`` depends on besides array values and shapes."""
    parts = []
    for prefix, sub in module.named_modules():
        params = tuple((n, None if p is None else (p.data.dtype.num, p.data.ndim, p.requires_grad, id(p)))
                       for n, p in sub._parameters.items())
        buffers = tuple((n, None if b is None else (b.dtype.num, b.ndim, id(b))) for n, b in sub._buffers.items())
        children = tuple((n, None if c is None else id(c)) for n, c in sub._modules.items())
        plain = tuple((n, _plain_key(v)) for n, v in sub.__dict__.items()
                      if n not in _REGISTRIES and not n.startswith("_adcompile"))
        parts.append((prefix, type(sub), sub.training, params, buffers, children, plain))
    return tuple(parts)


def _holds_list(value):
    if isinstance(value, list):
        return True
    return isinstance(value, tuple) and any(_holds_list(v) for v in value)


class TreeStamp:
    """Whether a module tree is still as it was when something was compiled for it: its
    version (``module.touch`` gives the module and its holders a new one on every assignment,
    registration, train/eval, dtype or requires_grad change), one comparison per call. A list
    attribute can change in place without an assignment, so a tree holding one is compared
    by its full ``module_key`` as well."""

    def __init__(self, module):
        self.version = tree_version(module)
        lists = any(_holds_list(v) for sub in module.modules() for n, v in sub.__dict__.items()
                    if n not in _REGISTRIES and not n.startswith("_adcompile"))
        self.key = module_key(module) if lists else None

    def current(self, module):
        return self.version == tree_version(module) and (self.key is None or self.key == module_key(module))
