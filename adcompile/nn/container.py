"""Containers of modules: ``Sequential`` (called in order) and ``ModuleList`` (held, iterated).

In compiled code both are tuples of their submodules, so ``for layer in self.layers``,
``self.layers[0]`` and ``len(self.layers)`` are resolved at compile time (the loop is
unrolled).
"""
from collections import OrderedDict

from ..errors import AdCompileError
from ..modules.module import Module


class _ModuleSequence(Module):
    _adcompile_sequence = True  # module_values.py: a tuple of submodules in compiled code

    def _items(self):
        return list(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._items())

    def _index(self, index):
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range for {type(self).__name__} of length {n}")
        return index % n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return type(self)(*self._items()[index]) if isinstance(self, Sequential) else \
                type(self)(self._items()[index])
        return self._items()[self._index(index)]

    def __setitem__(self, index, module):
        key = list(self._modules)[self._index(index)]
        setattr(self, key, module)

    def append(self, module):
        if not isinstance(module, Module):
            raise AdCompileError(f"{type(self).__name__} holds Modules, not {type(module).__name__}")
        self.register_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self


class Sequential(_ModuleSequence):
    """``Sequential(m1, m2, ...)`` or ``Sequential(OrderedDict(name=module))``: calls them in order.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).compile("python")
    >>> [name for name, _ in model.named_parameters()]
    ['0.weight', '0.bias', '2.weight', '2.bias']
    >>> model(np.ones((5, 4))).shape
    (5, 2)
    """

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, module in modules[0].items():
                self.register_module(name, module)
        else:
            for module in modules:
                self.append(module)

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(_ModuleSequence):
    """A list of modules whose parameters are registered (``layers.0.weight``, ...).

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> layers = nn.ModuleList([nn.Linear(2, 3), nn.Linear(3, 1)])
    >>> [name for name, _ in layers.named_parameters()]
    ['0.weight', '0.bias', '1.weight', '1.bias']
    >>> len(layers), layers[1].out_features
    (2, 1)
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.extend(modules)
