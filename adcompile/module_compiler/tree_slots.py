"""Pytree arguments (tuples, lists, dicts, namedtuples, registered classes of arrays) of compiled
and derived functions: flattened at the call, one flat argument per leaf.

``grad(loss)(params, X, y)`` with ``params = {"W1": ..., "b1": ...}`` runs a flat function
whose parameters are ``params_W1, params_b1, X, y`` (leaves named after their path, in the
order ``adcompile.tree.flatten`` gives them: a dict's keys sorted). The tree's structure is
compile-time information, part of the flat function's key: another structure (a new key, a
list of another length) compiles another specialisation. In the compiled code the argument is
a ``TreeValue`` whose items are the leaves' variables, so ``params["W1"]``, ``W, b = layer``
and ``for layer in layers:`` resolve while translating (``frontend/translator/tree_access.py``).
"""
from ..errors import CallError
from ..frontend.values import NONE, TreeValue, TupleValue
from ..ir.types import describe_value, type_of_value
from ..modules.leaves import module_leaves
from ..modules.module import Module
from ..tree import flatten, is_container, path_name, path_text
from ..tree.registry import node_type
from .tree_keys import module_key
from .values import ModuleSlot, module_value


class TreeSlot:
    """A pytree passed as an argument: its structure, and one flat argument per leaf -- or, for a
    leaf that is a Module (``{"model": model, "scale": 2.0}``), one per parameter and buffer of
    it, as for a Module argument (``modules`` maps such leaves' positions to their ModuleSlot)."""

    def __init__(self, treedef, modules=None):
        self.treedef = treedef
        self.modules = modules or {}

    @classmethod
    def of(cls, value, arg_name, fname):
        """The slot of the argument ``value``, its leaves checked (clear errors name their path)."""
        leaves, treedef = flatten(value)
        _check_keys(treedef, arg_name, (), fname)
        modules = {}
        for k, (path, leaf) in enumerate(zip(treedef.paths(), leaves)):
            if isinstance(leaf, Module):
                modules[k] = ModuleSlot(leaf, module_leaves(leaf))
            elif type_of_value(leaf) is None:
                raise CallError(f"{fname}: {path_text(arg_name, path)} is a {describe_value(leaf)}, which compiled "
                                "code cannot take: the leaves of a tuple, list or dict argument must be floats, "
                                "ints, bools, numpy arrays of float64/float32/int64/bool or Modules (a string or "
                                "other setting: pass it as a static argument, compile(f, static_argnames=...))")
        return cls(treedef, modules)

    @property
    def size(self):
        return self.treedef.num_leaves + sum(len(slot.leaf_paths) - 1 for slot in self.modules.values())

    def names(self, arg_name):
        """The flat parameters' names: ``params_W1``, ``layers_0_b``, ``nets_encoder_fc1_weight``."""
        names = []
        for k, path in enumerate(self.treedef.paths()):
            name = path_name(arg_name, path)
            names += self.modules[k].names(name) if k in self.modules else [name]
        return names

    def buffer_offsets(self):
        """The positions, among this argument's flat arguments, of its Modules' buffers."""
        offsets, start = [], 0
        for k in range(self.treedef.num_leaves):
            slot = self.modules.get(k)
            if slot is None:
                start += 1
                continue
            offsets += [start + j for j in slot.buffer_indices]
            start += len(slot.leaf_paths)
        return offsets

    def frontend_value(self, leaf_vars, arg_name=""):
        """The argument in compiled code: the tree of its leaves' variables (a Module leaf a
        ModuleValue whose parameters and buffers are its variables)."""
        leaves = iter(leaf_vars)
        positions = iter(range(self.treedef.num_leaves))
        paths = self.treedef.paths()

        def build(shape):
            if shape.is_leaf:
                k = next(positions)
                if k in self.modules:
                    slot = self.modules[k]
                    holders = {id(holder): next(leaves) for _, holder, _ in slot.leaves}
                    return module_value(slot.module, path_text(arg_name, paths[k]) + ".", holders)
                var = next(leaves)
                return NONE if var.type.dtype == "none" else var
            if shape.node is node_type(None):
                return NONE
            children = [build(child) for child in shape.children]
            if shape.node is node_type(()):
                return TupleValue(children)
            return TreeValue(shape.node, shape.aux, children)
        return build(self.treedef)

    def module_ids(self):
        """The ids of the Modules among the leaves (compiled code for them is dropped with them)."""
        return [id(slot.module) for slot in self.modules.values()]

    def key(self):
        modules = tuple((k, id(slot.module), module_key(slot.module)) for k, slot in sorted(self.modules.items()))
        return ("tree", self.treedef, modules)


def flat_leaves(value):
    """A pytree's flat arguments: its leaves, a Module leaf giving its parameter and buffer arrays."""
    flat = []
    for leaf in flatten(value)[0]:
        if isinstance(leaf, Module):
            flat += module_arrays(leaf)
        else:
            flat.append(leaf)
    return flat


def module_arrays(module):
    """A Module's flat arguments: its parameters' arrays, then its buffers."""
    return [p.data for _, p in module.named_parameters()] + [b for _, b in module.named_buffers()]


def _check_keys(treedef, arg_name, path, fname):
    """Dict keys in compiled code are compile-time strings: another key type is refused here."""
    if treedef.is_leaf:
        return
    keys = treedef.child_keys()
    if issubclass(treedef.node.cls, dict):
        for key in keys:
            if not isinstance(key, str):
                raise CallError(f"{fname}: {path_text(arg_name, path)} is a dict with the key {key!r}; a dict "
                                "passed to compiled code must have string keys (params[\"W1\"]), which name "
                                "its entries at compile time")
    for key, child in zip(keys, treedef.children):
        _check_keys(child, arg_name, path + (key,), fname)


def needs_slot(value):
    """Whether the argument ``value`` is a pytree container, flattened at the call."""
    return is_container(value)


class StaticSlot:
    """An argument named in ``compile(f, static_argnums=..., static_argnames=...)``: a hashable
    value that is a compile-time constant of the code (a string choosing a branch, a tuple of
    layer sizes). It takes no flat argument; each value compiles its own specialisation, and
    derivatives skip it."""

    size = 0

    def __init__(self, value):
        self.value = value

    def names(self, arg_name):
        return []

    def bind(self, tr, arg_name):
        """The argument in compiled code: the constant, as a global of that value is read."""
        return tr.global_value(self.value, arg_name, tr.src.node)

    def key(self):
        return ("static", type(self.value).__name__, self.value)


def mark_static(fn, args):
    """``args`` with each static argument of ``fn`` (the root compiled function) a StaticSlot,
    its hashability checked."""
    positions = getattr(fn, "static_positions", ())
    if not positions:
        return args
    marked = list(args)
    for k in positions:
        value = args[k]
        try:
            hash(value)
        except TypeError:
            raise CallError(f"{fn.name}: the static argument '{fn.param_names[k]}' must be hashable (a str, "
                            f"number, bool, None or tuple of them), not {type(value).__name__}: its value "
                            "selects the compiled code" + (" (pass a tuple)" if isinstance(value, list) else "")
                            ) from None
        marked[k] = StaticSlot(value)
    return marked
