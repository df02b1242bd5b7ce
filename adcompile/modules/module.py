"""``adcompile.Module``: the PyTorch-style container of parameters, buffers and submodules.

Assigning a ``Parameter`` or a ``Module`` as an attribute registers it; ``register_buffer``
registers state that is saved but not trained. Traversal (``named_parameters`` with dotted
names, ``modules``, ``children``), train/eval, ``zero_grad``, ``apply`` and the nested
``repr`` follow PyTorch. Saving and loading are in ``state.py``; calling a module
(``model(x)``) runs its ``forward`` compiled by adcompile (``module_compiler/``, which this
module does not import: it registers itself in ``dispatch.py``).
"""
import itertools
import weakref
from collections import OrderedDict

import numpy as np

from ..boundary import api_boundary
from ..backend.loader import BACKENDS
from ..errors import AdCompileError
from . import state as module_state
from .dispatch import module_compiler
from .parameter import Parameter
from ..tree import is_container

# Every change that compiled code of a module depends on gives the module, and every module
# holding it (through ``_adcompile_parents``), a new number from this counter: a compiled call
# compares one number to know whether its plan still holds (``module_compiler/tree_keys.py``).
_versions = itertools.count(1)
# Entries of ``__dict__`` that are caches or links, not state: not copied, not part of the key.
_TRANSIENT = ("_adcompile_plan", "_adcompile_parents", "_adcompile_finalizer")


def touch(module):
    """Mark ``module`` and the modules that hold it (transitively) as changed."""
    stack, seen = [module], set()
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        entries = current.__dict__
        entries["_adcompile_version"] = next(_versions)
        parents = entries.get("_adcompile_parents")
        if parents:
            stack.extend(parents)


def tree_version(module):
    """The number that changes whenever something compiled code of ``module`` depends on changes."""
    return module.__dict__.get("_adcompile_version")


def _link(owner, value):
    """Record that ``owner`` holds ``value`` (a Module or a Parameter), so changes reach it."""
    links = value.__dict__.get("_adcompile_parents" if isinstance(value, Module) else "_owners")
    if links is not None:
        links.add(owner)


def _unlink(owner, value):
    if isinstance(value, (Module, Parameter)):
        links = value.__dict__.get("_adcompile_parents" if isinstance(value, Module) else "_owners")
        if links is not None:
            links.discard(owner)


class Module:
    """Base class of models: subclass it, create parameters and submodules in ``__init__``
    (after ``super().__init__()``), and write ``forward(self, ...)`` as numpy code.

    >>> import numpy as np, adcompile
    >>> class Affine(adcompile.Module):
    ...     def __init__(self, n):
    ...         super().__init__()
    ...         self.scale = adcompile.Parameter(np.ones(n))
    ...         self.shift = adcompile.Parameter(np.zeros(n))
    ...     def forward(self, x):
    ...         return self.scale * x + self.shift
    >>> model = Affine(2).compile("python")  # "python": run the generated Python, not numba
    >>> model(np.array([1.0, 2.0]))
    array([1., 2.])
    >>> [name for name, _ in model.named_parameters()]
    ['scale', 'shift']
    >>> @adcompile.compile(backend="python")
    ... def loss(model, x):
    ...     return np.sum(model(x) ** 2)
    >>> dict(adcompile.grad(loss)(model, np.array([1.0, 2.0])))  # keyed like named_parameters()
    {'scale': array([2., 8.]), 'shift': array([2., 4.])}
    """

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_adcompile_parents", weakref.WeakSet())
        object.__setattr__(self, "_adcompile_version", next(_versions))

    # ------------------------------------------------------------ registration
    def _registries(self, name):
        if "_parameters" not in self.__dict__:
            raise AdCompileError(f"cannot assign '{name}' before Module.__init__() is called: call "
                                 f"super().__init__() first in {type(self).__name__}.__init__")
        return self._parameters, self._buffers, self._modules

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            params, buffers, modules = self._registries(name)
            self._forget(name)
            params[name] = value
            _link(self, value)
        elif isinstance(value, Module):
            params, buffers, modules = self._registries(name)
            self._forget(name)
            modules[name] = value
            _link(self, value)
        elif "_parameters" in self.__dict__ and name in self._parameters:
            if value is not None:
                raise AdCompileError(f"cannot assign a {type(value).__name__} to parameter '{name}' of "
                                     f"{type(self).__name__}: assign an adcompile.Parameter (or None)")
            _unlink(self, self._parameters[name])
            self._parameters[name] = None
        elif "_buffers" in self.__dict__ and name in self._buffers:
            self._buffers[name] = None if value is None else np.asarray(value)
        elif "_modules" in self.__dict__ and name in self._modules and value is None:
            _unlink(self, self._modules[name])
            self._modules[name] = None
        else:
            object.__setattr__(self, name, value)
        if "_adcompile_parents" in self.__dict__:
            touch(self)

    def _forget(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            _unlink(self, registry.pop(name, None))
        self.__dict__.pop(name, None)

    # copies (copy.deepcopy, pickle) leave out compiled plans and the links to holders
    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in _TRANSIENT}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__["_adcompile_parents"] = weakref.WeakSet()
        self.__dict__["_adcompile_version"] = next(_versions)
        for registry in ("_parameters", "_modules"):
            for value in state.get(registry, {}).values():
                if value is not None:
                    _link(self, value)

    def _touch(self):
        """Mark this module, and the modules holding it, as changed (``touch``)."""
        touch(self)

    def __getattr__(self, name):  # only called when normal lookup fails
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = self.__dict__.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for registry in (self._parameters, self._buffers, self._modules):
            if name in registry:
                _unlink(self, registry.pop(name))
                touch(self)
                return
        object.__delattr__(self, name)
        touch(self)

    def register_parameter(self, name, param):
        """Register ``param`` (a Parameter, or None for an absent optional parameter)."""
        if param is not None and not isinstance(param, Parameter):
            raise AdCompileError(f"register_parameter('{name}', ...) takes an adcompile.Parameter or None, "
                                 f"not {type(param).__name__}")
        self._check_new_name(name)
        self._registries(name)[0][name] = param
        if param is not None:
            _link(self, param)
        touch(self)

    def register_buffer(self, name, array, persistent=True):
        """Register ``array`` as state saved in ``state_dict`` (unless not ``persistent``) but not
        trained; in compiled code ``self.<name>`` reads it."""
        self._check_new_name(name)
        _, buffers, _ = self._registries(name)
        buffers[name] = None if array is None else np.asarray(array)
        if not persistent:
            self._non_persistent.add(name)
        touch(self)

    def register_module(self, name, module):
        if module is not None and not isinstance(module, Module):
            raise AdCompileError(f"register_module('{name}', ...) takes an adcompile.Module or None, "
                                 f"not {type(module).__name__}")
        self._check_new_name(name)
        self._registries(name)[2][name] = module
        if module is not None:
            _link(self, module)
        touch(self)

    add_module = register_module

    def _check_new_name(self, name):
        if not isinstance(name, str) or not name or "." in name:
            raise AdCompileError(f"invalid name {name!r}: a non-empty string without '.'")
        if name in self.__dict__:
            raise AdCompileError(f"attribute '{name}' already exists in {type(self).__name__}")

    # ------------------------------------------------------------ traversal
    def named_modules(self, prefix="", memo=None):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(f"{prefix}.{name}" if prefix else name, memo)

    def modules(self):
        for _, module in self.named_modules():
            yield module

    def named_children(self):
        seen = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self):
        for _, child in self.named_children():
            yield child

    def _named_members(self, registry, prefix="", recurse=True):
        seen = set()
        modules = self.named_modules(prefix) if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, registry).items():
                if value is None or id(value) in seen:
                    continue
                seen.add(id(value))
                yield (f"{module_prefix}.{name}" if module_prefix else name), value

    def named_parameters(self, prefix="", recurse=True):
        """(dotted name, Parameter) in registration order; a shared Parameter once."""
        yield from self._named_members("_parameters", prefix, recurse)

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix="", recurse=True):
        yield from self._named_members("_buffers", prefix, recurse)

    def buffers(self, recurse=True):
        for _, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    # ------------------------------------------------------------ modes and gradients
    def train(self, mode=True):
        for module in self.modules():
            object.__setattr__(module, "training", bool(mode))
            touch(module)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for param in self.parameters():
            if set_to_none:
                param.grad = None
            elif param.grad is not None:
                param.grad[...] = 0

    def requires_grad_(self, requires_grad=True):
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def apply(self, fn):
        """Call ``fn`` on every submodule (children first) and on this module; returns self."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def to(self, dtype):
        """Convert the parameters and float buffers to ``dtype`` (float32 or float64), explicitly."""
        dtype = np.dtype(dtype)
        if dtype not in (np.float32, np.float64):
            raise AdCompileError(f"Module.to({dtype}): parameters are float32 or float64")
        for module in self.modules():
            for name, param in module._parameters.items():
                if param is not None and param.data.dtype != dtype:
                    param._data = param.data.astype(dtype)
                    param.grad = None
                    param._touch_owners()
            for name, buffer in module._buffers.items():
                if buffer is not None and buffer.dtype.kind == "f":
                    module._buffers[name] = buffer.astype(dtype)
            touch(module)
        return self

    def double(self):
        return self.to(np.float64)

    def float(self):
        return self.to(np.float32)

    # ------------------------------------------------------------ state (state.py)
    def state_dict(self):
        return module_state.state_dict(self)

    def load_state_dict(self, state, strict=True):
        return module_state.load_state_dict(self, state, strict)

    def save(self, path):
        module_state.save(self, path)

    def load(self, path, strict=True):
        return module_state.load(self, path, strict)

    # ------------------------------------------------------------ calling
    def compile(self, backend="numba"):
        """Choose how ``model(x)`` runs: ``"numba"`` (default) or ``"python"`` (the generated
        Python, for debugging). Returns self."""
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        object.__setattr__(self, "_adcompile_backend", backend)
        touch(self)
        return self

    def forward(self, *args):
        raise NotImplementedError(f"{type(self).__name__} does not define forward(self, ...)")

    @api_boundary
    def __call__(self, *args, **kwargs):
        return module_compiler().call_module(self, args, kwargs)  # module_compiler/calling.py

    # ------------------------------------------------------------ printing
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        extra = self.extra_repr()
        if extra:
            lines = extra.split("\n")
        for name, child in self._modules.items():
            text = repr(child).replace("\n", "\n  ")
            lines.append(f"({name}): {text}")
        main = type(self).__name__ + "("
        if lines:
            if len(lines) == 1 and not self._modules:
                main += lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers) | set(self._modules))


def needs_flat_function(args):
    """Whether a call with ``args`` runs a flat function of arrays (``module_compiler/``): an
    argument is a Module or a pytree (a tuple, list, dict, namedtuple or registered class,
    flattened to its leaves)."""
    return any(isinstance(a, Module) or is_container(a) for a in args)
