"""A derived function of a function of Modules or pytrees, as the same chain of transforms of the
flat function of their leaves; and the results of that chain put back in the user's terms.

``grad(loss)`` called with a dict ``params`` is ``grad`` of the flat function with respect to
every leaf of ``params`` (``flat_chain``), whose gradients are regrouped into a dict like it
(``regroup``). Each transform of the chain may be taken with respect to a pytree or a Module:
``jvp(grad(loss), ...)`` or ``jacobian(grad(loss))`` transform the flat gradient, which returns
one array per leaf, and their results are regrouped by ``results_tree_of_call`` -- the
structure, over the flat results, that the user's function returns (``api/result_trees.py``).
"""
from collections import OrderedDict

from ..api.compiled import CompiledFunction
from ..api.derived import MATRIX_KINDS, DerivedFunction
from ..api.result_trees import results_tree, root_results_tree
from ..errors import CallError
from ..ir.types import type_of_value
from ..modules.module import Module
from ..tree import structure
from .flat_functions import FlatFunction, TreeEntry, flat_function
from .tree_slots import TreeSlot, needs_slot


def regroup(positions, wrt, grads):
    """The gradients in the user's terms: a dict for a Module argument, the argument's structure
    for a pytree, an array otherwise."""
    grads = iter(grads)
    out = []
    for k in wrt:
        entry = positions[k]
        if isinstance(entry, TreeEntry):
            out.append(entry.rebuild([next(grads) for _ in entry]))
        elif isinstance(entry, list):
            out.append(OrderedDict((name, next(grads)) for _, name in entry))
        else:
            out.append(next(grads))
    return out


def gradient_tree(positions, k):
    """The structure of the gradient with respect to argument ``k``: a leaf for an array, the
    argument's structure for a pytree, a dict of its parameters for a Module."""
    entry = positions[k]
    count = len(entry) if isinstance(entry, list) else 1
    return structure(regroup(positions, [k], [0.0] * count)[0])


def flat_wrt(positions, wrt, fname):
    indices = []
    for k in wrt:
        entry = positions[k]
        if entry is None:
            raise static_wrt_error(fname, k)
        if isinstance(entry, TreeEntry):
            indices += [index for index, _ in entry]
        elif isinstance(entry, list):
            if not entry:
                raise CallError(f"{fname}: the Module argument {k} has no parameter with requires_grad=True")
            indices += [index for index, _ in entry]
        else:
            indices.append(entry)
    return tuple(indices)


def user_wrt(fn, args):
    if fn.wrt is not None:
        return list(fn.wrt)
    return [k for k, a in enumerate(args) if isinstance(a, (Module, TreeSlot)) or needs_slot(a)
            or (type_of_value(a) is not None and type_of_value(a).is_float)]


def static_wrt_error(fname, k):
    return CallError(f"{fname}: argument {k} is static (compile(f, static_argnums=...)): a compile-time "
                     "constant has no derivative; differentiate with respect to another argument")


def assembled_matrix_error(level, k):
    """The error for a Hessian or Jacobian of pytrees (``level``, with respect to argument ``k``)
    used as one generated function."""
    return CallError(
        f"{level.name}: a {level.kind} with respect to a Module, tuple, list or dict argument, or of a function "
        "returning one, is a tuple or dict of blocks, assembled from one derivative per row or column when it "
        "is called, not one generated function: it cannot be differentiated again, called inside compiled code "
        "or shown by adcompile.source; call it from Python, or inspect the derivative a row comes from "
        f"(adcompile.source(adcompile.grad(f, wrt={k}), ...))")


def flat_chain(fn, args, positions):
    """The transforms of ``fn`` (a derived function of a compiled function) applied to the flat
    function of ``args``: (flat derived function, the user's wrt if its outermost transform is
    a gradient with respect to a Module or pytree, whose result must be regrouped, else None).
    A transform with respect to a pytree or Module is taken with respect to all its leaves."""
    levels = []
    while isinstance(fn, DerivedFunction):
        levels.append(fn)
        fn = fn.base
    if not isinstance(fn, CompiledFunction):
        raise CallError(f"{levels[-1].name if levels else fn!r}: Module arguments are supported by "
                        "functions built from a plain or compiled Python function")
    flat = flat_function(fn.pyfunc, args, fn.backend)
    spec, grouped = [], None
    for depth, level in enumerate(reversed(levels)):
        wrt = user_wrt(level, args)
        if any(positions[k] is None for k in wrt):
            raise static_wrt_error(level.name, next(k for k in wrt if positions[k] is None))
        trees = [k for k in wrt if isinstance(positions[k], list)]
        if trees and level.kind in MATRIX_KINDS:
            raise assembled_matrix_error(level, trees[0])
        if trees:
            spec.append((level.kind, flat_wrt(positions, wrt, level.name), level.tangents_only, level.has_aux))
            outermost = depth == len(levels) - 1
            grouped = wrt if outermost and level.kind in ("grad", "value_and_grad") else None
        else:
            indices = tuple(positions[k] for k in wrt)
            spec.append((level.kind, indices if level.wrt_is_tuple else indices[0], level.tangents_only,
                         level.has_aux))
    return flat.chain(tuple(spec)), grouped


def results_tree_of_call(fn, args, positions, flat, flat_args):
    """The structure of ``fn``'s results, a compiled or derived function called with ``args``
    (``positions`` theirs), over the flat results of ``flat``, its flat chain, at ``flat_args``."""
    root = flat
    while not isinstance(root, FlatFunction):
        root = root.base
    root_ir = root.primal_ir(root.signature(flat_args))
    return results_tree(fn, root_results_tree(root_ir), lambda level: user_wrt(level, args),
                        lambda k: gradient_tree(positions, k))
