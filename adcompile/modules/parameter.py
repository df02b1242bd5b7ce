"""``adcompile.Parameter``: a trainable numpy array held by a Module.

A Parameter owns ``.data`` (a float32 or float64 numpy array; its dtype never changes
silently) and ``.grad`` (None until ``adcompile.backward`` fills it). Assigning a Parameter as
an attribute of a Module registers it. In compiled ``forward`` code ``self.weight`` is the
array itself.
"""
import weakref

import numpy as np

from ..errors import AdCompileError

class ParameterError(AdCompileError, TypeError):
    """A Parameter was given something that cannot be trained (integers, objects)."""


def as_parameter_array(value, what="Parameter"):
    """``value`` as a float array, or a ParameterError naming what is wrong."""
    if isinstance(value, Parameter):
        value = value.data
    array = np.asarray(value)
    if array.dtype == np.float64 or array.dtype == np.float32:
        return array
    if isinstance(value, np.ndarray) or array.dtype.kind in "iub":
        raise ParameterError(f"a {what} must hold a float32 or float64 array, not {array.dtype} "
                             f"(convert it first, e.g. array.astype(np.float64))")
    raise ParameterError(f"a {what} must hold a float32 or float64 array, not {type(value).__name__}")


class Parameter:
    """A trainable array: ``Parameter(np.zeros((3, 4)))``; ``requires_grad=False`` freezes it.

    >>> import numpy as np, adcompile
    >>> weight = adcompile.Parameter(np.zeros((2, 3)))
    >>> weight.shape, weight.requires_grad, weight.grad
    ((2, 3), True, None)
    >>> adcompile.Parameter(np.zeros(3), requires_grad=False).requires_grad
    False
    >>> weight.numel(), type(weight.detach()).__name__
    (6, 'ndarray')
    >>> weight[0, 1] = 2.5
    >>> float(weight[0, 1]), weight.data[0]
    (2.5, array([0. , 2.5, 0. ]))
    """

    __array_priority__ = 20

    def __init__(self, data, requires_grad=True):
        array = as_parameter_array(data)
        if not isinstance(data, np.ndarray) or not array.flags.writeable:
            array = np.array(array)
        self._data = array
        self.grad = None
        self._requires_grad = bool(requires_grad)
        self._owners = weakref.WeakSet()  # the modules holding it (module.touch on a change)

    def _touch_owners(self):
        for owner in list(self._owners):
            owner._touch()  # Module._touch: this module and those holding it changed

    def __getstate__(self):  # copies leave out the links to the holding modules
        return {k: v for k, v in self.__dict__.items() if k != "_owners"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._owners = weakref.WeakSet()

    @property
    def data(self):
        return self._data

    @data.setter
    def data(self, value):
        array = as_parameter_array(value)
        if array.dtype != self._data.dtype:
            raise ParameterError(f"cannot assign a {array.dtype} array to the data of a {self._data.dtype} "
                                 "Parameter (a Parameter never changes dtype silently); convert it first")
        changed = array.ndim != self._data.ndim
        self._data = array
        if changed:
            self._touch_owners()

    # numpy-like conveniences
    shape = property(lambda self: self._data.shape)
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)

    def numpy(self):
        return self._data

    def numel(self):
        """The number of entries (PyTorch's ``numel``): ``sum(p.numel() for p in model.parameters())``."""
        return int(self._data.size)

    def detach(self):
        """The data as a plain numpy array sharing its memory (a view, as PyTorch's ``detach``
        shares storage): no gradient, and writing to it changes the Parameter."""
        return self._data.view()

    def __array__(self, dtype=None, copy=None):
        return self._data if dtype is None else self._data.astype(dtype)

    def __len__(self):
        return len(self._data)

    def __getitem__(self, index):
        """``p[index]``: the data's entries (numpy's indexing: a view for slices)."""
        return self._data[index]

    def __setitem__(self, index, value):
        """``p[index] = value`` writes into the data, as PyTorch's ``with torch.no_grad(): p[i] = v``
        (a perturbation for a finite difference, a manual initialisation)."""
        self._data[index] = value

    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        changed = bool(value) != self._requires_grad
        self._requires_grad = bool(value)
        if changed:  # which gradients a compiled step computes depends on it
            self._touch_owners()

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    def __repr__(self):
        return f"Parameter containing:\n{self._data!r}" + ("" if self.requires_grad else ", requires_grad=False")
