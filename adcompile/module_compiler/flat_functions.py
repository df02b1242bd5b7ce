"""The flat function of a function of Modules: ``pyfunc`` with each Module argument replaced by its
parameter and buffer arrays (``named_parameters()`` then ``named_buffers()`` order), one per module
key, cached while the modules live; and the flat arguments and trainable positions of a call."""
import inspect
from collections import OrderedDict
import threading
import weakref

from ..api.specialised import Specialised
from ..api.derived import DerivedFunction
from ..backend.names import safe_name
from ..errors import CallError
from ..modules.leaves import module_leaves
from ..modules.module import Module
from .tree_keys import module_key
from ..tree import flatten as tree_flatten
from ..tree.plans import builder
from .tree_slots import StaticSlot, TreeSlot, flat_leaves, needs_slot
from .values import ModuleSlot, translate_flat
from ..transforms.arguments import written_arguments

_lock = threading.RLock()
_flat_functions = {}


class FlatFunction(Specialised):
    """``pyfunc`` with each Module argument replaced by its parameter and buffer arrays."""

    def __init__(self, pyfunc, modules, backend, label=None):
        super().__init__()
        self.pyfunc = pyfunc
        self.backend = backend
        self.name = label or pyfunc.__name__
        names = list(inspect.signature(pyfunc).parameters)
        self.slots = [ModuleSlot(m, module_leaves(m)) if isinstance(m, Module) else
                      m if isinstance(m, (TreeSlot, StaticSlot)) else None for m in modules]
        self.param_names = []
        self.buffer_positions = set()  # flat positions of the modules' buffers
        for name, slot in zip(names, self.slots):
            if slot is None:
                self.param_names.append(name)
            elif isinstance(slot, (TreeSlot, StaticSlot)):
                start = len(self.param_names)
                if isinstance(slot, TreeSlot):  # the buffers of Modules inside it
                    self.buffer_positions |= {start + k for k in slot.buffer_offsets()}
                self.param_names += slot.names(name)
            else:
                start = len(self.param_names)
                self.buffer_positions |= {start + k for k in slot.buffer_indices}
                self.param_names += slot.names(name)
        self._ir = {}
        self.result_structure = None  # the nested tuple the function returns flat, if it does

    def origin(self):
        return f"{self.pyfunc.__module__}.{self.pyfunc.__qualname__}"

    def check_arity(self, args):
        if len(args) != len(self.param_names):
            raise CallError(f"{self.name}() takes {len(self.param_names)} flat arguments, {len(args)} given")

    def python_function(self):
        return self.pyfunc

    def primal_ir(self, sig):
        if sig not in self._ir:
            with self._lock:
                if sig not in self._ir:
                    fn = translate_flat(self.pyfunc, self.slots, sig, self.ir_name())
                    self.result_structure = getattr(fn, "result_structure", None)
                    buffers = {param for k, param in enumerate(fn.params) if k in self.buffer_positions}
                    state = [param for param in written_arguments(fn) if param in buffers]
                    if state:  # buffers written in place: their writes reach the module's arrays
                        fn.state_params = state
                    self._ir[sig] = fn
        return self._ir[sig]

    ir = primal_ir

    def ir_name(self):
        """The generated function's name: ``Owner_method`` or the name, made safe (backend/names.py)."""
        owner = [part for part in self.pyfunc.__qualname__.split(".") if part != "<locals>"]
        return safe_name("_".join(owner[-2:]) if len(owner) > 1 else self.pyfunc.__name__)

    def user_returns_tuple(self, sig):
        return self.primal_ir(sig).returns_tuple

    def derived(self, kind, wrt):
        """A cached DerivedFunction of this flat function."""
        return self.chain(((kind, wrt, False),))

    def chain(self, spec):
        """A cached chain of transforms of this flat function: ``spec`` lists (kind, flat wrt,
        tangents_only[, has_aux]) from the innermost transform out, e.g. (("grad", 2, False), ("jvp",
        2, True)) is a column of the Hessian with respect to flat argument 2."""
        cache = self.__dict__.setdefault("_derived", {})
        derived = cache.get(spec)
        if derived is None:
            with self._lock:
                fn = self
                for k, (kind, wrt, tangents_only, *has_aux) in enumerate(spec):
                    key = spec[:k + 1]
                    if key not in cache:
                        cache[key] = DerivedFunction(fn, kind, wrt, tangents_only=tangents_only,
                                                     has_aux=bool(has_aux and has_aux[0]))
                    fn = cache[key]
                derived = fn
        return derived

    def __repr__(self):
        return f"<adcompile flat {self.name}>"


def flat_function(pyfunc, args, backend):
    """The FlatFunction of ``pyfunc`` for the Modules and pytrees among ``args`` (by module key
    and tree structure; a TreeSlot or StaticSlot in ``args`` stands for its argument). The
    cache holds no model: a FlatFunction refers to its modules weakly, and a module's entries
    are dropped when it is collected (so ids in keys always belong to live modules)."""
    names = list(inspect.signature(pyfunc).parameters)
    modules = [a if isinstance(a, (Module, TreeSlot, StaticSlot)) else
               TreeSlot.of(a, names[k] if k < len(names) else f"argument {k}", pyfunc.__name__) if needs_slot(a)
               else None for k, a in enumerate(args)]
    key = (pyfunc, backend, tuple((id(m), module_key(m)) if isinstance(m, Module) else
                                  m.key() if m is not None else None for m in modules))
    with _lock:
        flat = _flat_functions.get(key)
        if flat is None:
            label = pyfunc.__qualname__.replace(".<locals>", "")
            flat = _flat_functions[key] = FlatFunction(pyfunc, modules, backend, label)
            held = [m for m in modules if isinstance(m, Module)]
            held += [slot.module for m in modules if isinstance(m, TreeSlot) for slot in m.modules.values()]
            _module_ids[key] = {id(module) for module in held}
            for module in held:
                if "_adcompile_finalizer" not in module.__dict__:
                    module.__dict__["_adcompile_finalizer"] = weakref.finalize(module, _forget_module, id(module))
    return flat


_module_ids = {}  # flat function key -> the ids of the Modules it was compiled for


def _forget_module(module_id):
    """A module was collected: drop the flat functions compiled for it."""
    with _lock:
        for key in [k for k, ids in _module_ids.items() if module_id in ids]:
            del _flat_functions[key], _module_ids[key]


def flat_arguments(args):
    """The arguments with each Module replaced by its arrays, each pytree by its leaves (static
    arguments, compile-time constants, dropped)."""
    flat = []
    for value in args:
        if isinstance(value, Module):
            flat += [p.data for _, p in value.named_parameters()]
            flat += [b for _, b in value.named_buffers()]
        elif needs_slot(value):
            flat += flat_leaves(value)
        elif not isinstance(value, StaticSlot):
            flat.append(value)
    return flat


class TreeEntry(list):
    """The differentiable positions of a pytree argument: [(flat index, path)] per leaf (per
    parameter with requires_grad of a Module leaf), and how gradients with respect to it are
    rebuilt: in its structure, a Module leaf's a dict keyed like ``named_parameters()``."""

    def __init__(self, entries, treedef, module_names=None):
        super().__init__(entries)
        self.treedef = treedef
        self.module_names = module_names or {}  # leaf position -> trainable parameter names

    def rebuild(self, grads):
        """The gradients (one per entry, in order) in the argument's structure."""
        if not self.module_names:
            return builder(self.treedef)(grads)
        grads = iter(grads)
        leaves = [OrderedDict((name, next(grads)) for name in self.module_names[k]) if k in self.module_names
                  else next(grads) for k in range(self.treedef.num_leaves)]
        return self.treedef.unflatten(leaves)


def tree_entry(treedef, modules, index):
    """The TreeEntry of a pytree argument of structure ``treedef`` whose first flat argument is
    ``index``; ``modules`` maps the positions of its Module leaves to them."""
    entries, module_names = [], {}
    for k, path in enumerate(treedef.paths()):
        module = modules.get(k)
        if module is None:
            entries.append((index, path))
            index += 1
            continue
        module_names[k] = []
        for name, param in module.named_parameters():
            if param.requires_grad:
                entries.append((index, path + (name,)))
                module_names[k].append(name)
            index += 1
        index += sum(1 for _ in module.named_buffers())
    return TreeEntry(entries, treedef, module_names), index


def tree_layout(value):
    """(structure, {position: Module leaf}) of a pytree argument or its TreeSlot."""
    if isinstance(value, TreeSlot):
        return value.treedef, {k: slot.module for k, slot in value.modules.items()}
    leaves, treedef = tree_flatten(value)
    return treedef, {k: leaf for k, leaf in enumerate(leaves) if isinstance(leaf, Module)}


def trainable_positions(args):
    """Per argument: for a Module, [(flat index, name)] of its parameters with requires_grad;
    for a pytree, a TreeEntry; for a static argument None; for another argument, its flat index."""
    positions, index = [], 0
    for value in args:
        if isinstance(value, StaticSlot):
            positions.append(None)
        elif isinstance(value, TreeSlot) or needs_slot(value):  # a TreeSlot: a pytree in compiled code
            entry, index = tree_entry(*tree_layout(value), index)
            positions.append(entry)
        elif isinstance(value, Module):
            entries = []
            for name, param in value.named_parameters():
                if param.requires_grad:
                    entries.append((index, name))
                index += 1
            index += sum(1 for _ in value.named_buffers())
            positions.append(entries)
        else:
            positions.append(index)
            index += 1
    return positions


def called_flattened(root):
    """Whether ``root`` (a compiled function) was called with a Module argument."""
    pyfunc = getattr(root, "pyfunc", None)
    return any(key[0] is pyfunc for key in list(_flat_functions))
