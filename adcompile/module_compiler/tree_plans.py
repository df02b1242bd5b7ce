"""The fast path of calls with pytree arguments: one plan per tree structure.

``grad(loss)(params, X, y)`` in a training loop has the same tree structure on every call.
The first call with a structure builds the flat derived function and the regrouping of its
results (``gradients.plan_call``); later calls flatten each argument once, look the plan up by
the arguments' structures and run it -- the cost of a call is the flattening, not the
translation's bookkeeping. Calls with a Module argument, or a pytree holding one, take the
general path (a module's structure can change in place).
"""
from ..errors import CallError
from ..modules.module import Module
from ..tree import flatten, is_container
from ..tree.plans import FAST_LEAF_TYPES, reader
from .tree_slots import TreeSlot

NOT_PLANNED = object()


def run_planned(fn, args, extra, plan_call):
    """The result of ``fn(*args)`` through the plan of the arguments' tree structures, or
    NOT_PLANNED where an argument is, or holds, a Module. The last structure's plan is tried
    first, its arguments read by ``adcompile.tree.plans.reader`` (no TreeDef built)."""
    last = fn.__dict__.get("_tree_plan_last")
    if last is not None:
        matched, result = last.call(fn, args, extra)
        if matched:
            return result
    flat_args, structures = [], []
    for value in args:
        if isinstance(value, Module):
            return NOT_PLANNED
        if is_container(value):
            leaves, treedef = flatten(value)
            if any(isinstance(leaf, Module) for leaf in leaves):
                return NOT_PLANNED
            flat_args += leaves
            structures.append(treedef)
        else:
            flat_args.append(value)
            structures.append(None)
    plans = fn.__dict__.setdefault("_tree_plans", {})
    key = tuple(structures)
    plan = plans.get(key)
    if plan is None:
        plan = plans[key] = plan_call(fn, args)
    result = _run(fn, plan, args, flat_args, extra)
    fn._tree_plan_last = LastPlan([_read_plain if treedef is None else reader(treedef) for treedef in structures], plan)
    return result


class LastPlan:
    """The plan of the structures of a function's last call with pytrees, and the readers of those
    structures: ``Specialised.run`` tries it first, before anything else looks at the arguments."""

    __slots__ = ("readers", "plan")

    def __init__(self, readers, plan):
        self.readers, self.plan = readers, plan

    def call(self, fn, args, extra):
        """(True, the result of ``fn(*args)``) where ``args`` have the structures, else (False, None)."""
        flat_args = _read(self.readers, args)
        if flat_args is None:
            return False, None
        return True, _run(fn, self.plan, args, flat_args, extra)


def _run(fn, plan, args, flat_args, extra):
    try:
        return plan(flat_args, extra)
    except CallError:
        _check_leaves(fn, args)  # a leaf of an unsupported type: told with its path
        raise


def _read(readers, args):
    """The flat arguments of ``args`` if each has the structure its reader reads, else None."""
    if len(readers) != len(args):
        return None
    flat_args = []
    for read, value in zip(readers, args):
        if not read(value, flat_args):
            return None
    return flat_args


def _read_plain(value, flat_args):
    """An argument that is not a pytree (an array, a number, None)."""
    if type(value) not in FAST_LEAF_TYPES and value is not None:
        return False
    flat_args.append(value)
    return True


def _check_leaves(fn, args):
    root = fn
    while getattr(root, "base", None) is not None:
        root = root.base
    for name, value in zip(root.param_names, args):
        if is_container(value):
            TreeSlot.of(value, name, root.name)
