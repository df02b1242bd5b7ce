"""The fast path of calls with pytree arguments: one plan per tree structure.

``grad(loss)(params, X, y)`` in a training loop has the same tree structure on every call.
The first call with a structure builds the flat derived function and the regrouping of its
results (``gradients.plan_call``); later calls flatten each argument once, look the plan up by
the arguments' structures and run it -- the cost of a call is the flattening, not the
translation's bookkeeping. Calls with a Module argument take the general path (a module's
structure can change in place).
"""
from ..errors import CallError
from ..modules.module import Module
from ..tree import flatten, is_container
from .tree_slots import TreeSlot

NOT_PLANNED = object()


def run_planned(fn, args, extra, plan_call):
    """The result of ``fn(*args)`` through the plan of the arguments' tree structures, or
    NOT_PLANNED where an argument is a Module."""
    flat_args, structures = [], []
    for value in args:
        if isinstance(value, Module):
            return NOT_PLANNED
        if is_container(value):
            leaves, treedef = flatten(value)
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
    try:
        return plan(flat_args, extra)
    except CallError:
        _check_leaves(fn, args)  # a leaf of an unsupported type: told with its path
        raise


def _check_leaves(fn, args):
    root = fn
    while getattr(root, "base", None) is not None:
        root = root.base
    for name, value in zip(root.param_names, args):
        if is_container(value):
            TreeSlot.of(value, name, root.name)
