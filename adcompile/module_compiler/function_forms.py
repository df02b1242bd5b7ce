"""The function forms -- ``jvp``, ``hvp`` and ``vjp`` -- at the boundary: the arguments flattened
once, the transform taken of the function of the leaves, the results put back in the user's terms.

``flat_base(f, args)`` is the one flattening: for a call whose arguments are arrays and numbers it
is ``f`` and ``args`` (nothing to do); where an argument is a Module, a pytree, or static
(``compile(f, static_argnums=...)``), it is the flat function of ``f`` (for a derived ``f``, the
same transforms of it, ``chains.flat_chain``: ``jvp(grad(loss), ...)`` with a dict ``params``
transforms the gradient with respect to its leaves), the flat arguments and the arguments'
``positions`` (``flat_functions.trainable_positions``); its ``results_tree()`` regroups outputs
(a gradient's in the argument's structure) and flattens cotangents given in that structure.
Tangents come in per argument -- a pytree's with its structure, a Module's as a dict keyed like
``named_parameters()`` (a missing key: that parameter is not differentiated) -- and are
flattened the same way (``flat_tangents``); gradients are rebuilt from ``positions``
(``chains.regroup``).
"""
from collections import OrderedDict
from typing import NamedTuple, Optional

from ..api.derived import DerivedFunction
from ..api.directions import tangent_like
from ..errors import CallError
from ..modules.module import Module, needs_flat_function
from ..tree import flatten as tree_flatten
from ..tree.structure import path_text
from .flat_functions import TreeEntry, flat_arguments, flat_function, trainable_positions
from .chains import flat_chain, flat_wrt, regroup, results_tree_of_call, static_wrt_error, user_wrt
from .tree_slots import mark_static


class FlatCall(NamedTuple):
    """A call that a function form transforms: ``function`` (``f``, or the flat chain of ``f`` where
    the arguments are flattened), its ``args`` (the flat arguments), the arguments' ``positions``
    among them (None: not flattened) and the user's arguments, ``marked`` (static ones marked)."""

    function: object
    args: tuple
    positions: Optional[list]
    user: object = None
    marked: tuple = ()

    def results_tree(self):
        """The structure of the user's function's results over ``function``'s flat results (None
        for an unflattened call, whose results the code's own structure describes)."""
        if self.positions is None:
            return None
        return results_tree_of_call(self.user, self.marked, self.positions, self.function, self.args)


def flat_base(f, args):
    """The FlatCall of ``f`` called with ``args``: for arrays and numbers ``f`` itself (nothing to
    flatten); where an argument is a Module, a pytree or static, the flat chain of ``f``."""
    root = f
    while getattr(root, "base", None) is not None:
        root = root.base
    if not (root.static_positions or needs_flat_function(args)):
        return FlatCall(f, tuple(args), None)
    f.check_arity(args)
    marked = mark_static(root, args)
    positions = trainable_positions(marked)
    if f is root:
        flat = flat_function(root.pyfunc, marked, root.backend)
    else:
        flat, _ = flat_chain(f, marked, positions)  # a gradient's results: one array per leaf
    return FlatCall(flat, tuple(flat_arguments(marked)), positions, f, tuple(marked))


def flat_tangents(what, primals, tangents, positions, names):
    """(flat indices of the differentiated arguments, their tangents as the code takes them)."""
    if positions is None:
        wrt, taken = [], []
        for k, t in enumerate(tangents):  # a loop, not generators: hvp is called in loops
            if t is not None:
                wrt.append(k)
                taken.append(tangent_like(t, primals[k], names[k]))
        return tuple(wrt), tuple(taken)
    indices, taken = [], []
    for k, (value, tangent) in enumerate(zip(primals, tangents)):
        entry = positions[k]
        if entry is None:
            if tangent is not None:
                raise static_wrt_error(what, k)
        elif isinstance(entry, TreeEntry):
            if tangent is not None:
                indices += [index for index, _ in entry]
                taken += _tree_tangents(what, k, value, tangent, entry)
        elif isinstance(value, Module):
            for index, tangent_leaf in _module_tangents(what, k, value, tangent, entry):
                indices.append(index)
                taken.append(tangent_leaf)
        elif tangent is not None:
            indices.append(entry)
            taken.append(tangent_like(tangent, value, names[k]))
    if not indices:
        raise CallError(f"{what}: every tangent is None (or an empty dict): nothing to differentiate")
    return tuple(indices), tuple(taken)


def _tree_tangents(what, k, value, tangent, entry):
    """The leaves of the tangent of the pytree argument ``k``, which has its structure."""
    leaves, _ = tree_flatten(value)
    tangent_leaves, tangent_def = tree_flatten(tangent)
    if tangent_def != entry.treedef:
        raise CallError(f"{what}: the tangent of argument {k} must have the structure of the argument, "
                        f"{entry.treedef}, not {tangent_def}")
    return [tangent_like(t, x, path_text(f"argument {k}", path))
            for t, x, path in zip(tangent_leaves, leaves, entry.treedef.paths())]


def _module_tangents(what, k, module, tangent, entry):
    """(flat index, tangent) per parameter given a tangent in the dict of the Module argument ``k``."""
    tangent = {} if tangent is None else tangent
    if not isinstance(tangent, dict):
        raise CallError(f"{what}: the tangent of the Module argument {k} must be a dict keyed like "
                        f"named_parameters(), not {type(tangent).__name__}")
    index_of = {name: index for index, name in entry}
    unknown = set(tangent) - set(index_of)
    if unknown:
        raise CallError(f"{what}: tangent keys {sorted(unknown)} are not parameters with requires_grad "
                        f"of the Module argument {k}")
    params = dict(module.named_parameters())
    return [(index_of[name], tangent_like(tangent[name], params[name].data, name))
            for name in index_of if name in tangent]


def differentiated_arguments(primals, tangents):
    """The user positions of the arguments that have a tangent (a non-empty one for a Module)."""
    return [k for k, t in enumerate(tangents) if t is not None and not (isinstance(primals[k], Module) and not t)]


def tangents_by_argument(primals, tangents, positions, results):
    """``hvp``'s results, one per flat differentiated leaf, regrouped per differentiated argument:
    a pytree's in its structure, a Module's as a dict of the parameters given a tangent."""
    if positions is None:
        return results[0] if len(results) == 1 else tuple(results)
    results = iter(results)
    out = []
    for k in differentiated_arguments(primals, tangents):
        entry = positions[k]
        if isinstance(entry, TreeEntry):
            out.append(entry.rebuild([next(results) for _ in entry]))
        elif isinstance(primals[k], Module):
            out.append(OrderedDict((name, next(results)) for _, name in entry if name in tangents[k]))
        else:
            out.append(next(results))
    return out[0] if len(out) == 1 else tuple(out)


def vjp_wrt(f, args, positions, wrt):
    """(the flat wrt of a vjp, the finisher of its gradients): one gradient per argument, None where
    not differentiated, for a call without flattening; per differentiated argument (a dict for a
    Module, the structure of a pytree) for a flattened one."""
    if positions is None:
        return wrt, None
    user = DerivedFunction(f, "vjp", wrt)  # wrt normalised (names, negative indices)
    wrt = [k for k in user_wrt(user, args) if user.wrt is not None or positions[k] is not None]
    return flat_wrt(positions, wrt, user.name), lambda grads: tuple(regroup(positions, wrt, grads))
