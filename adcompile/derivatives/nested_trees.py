"""Derivatives called inside compiled code with pytree arguments: ``grad(loss)(params, X, y)`` in a
compiled training step, where ``params`` is a dict of arrays.

Inside compiled code a pytree is a compile-time ``TupleValue``/``TreeValue`` whose leaves are IR
atoms. The call is made as a call from Python makes it (``module_compiler/chains.py``): the
arguments are flattened to their leaves (the structure becomes a ``TreeSlot``), the same
transforms are taken of the flat function, its code is inlined on the leaves, and gradients with
respect to a pytree are rebuilt in its structure -- here as a compile-time tree of atoms, so that
``g["W"]`` reads the gradient of ``params["W"]``.
"""
from ..api.aux_outputs import aux_structure, finish_matrix_with_aux, finish_with_aux
from ..errors import CallError
from ..frontend.values import NoneValue, TreeValue, TupleValue
from ..module_compiler.chains import flat_chain
from ..module_compiler.gradients import regroup_result
from ..module_compiler.flat_functions import trainable_positions
from ..module_compiler.tree_slots import TreeSlot
from ..tree import flatten
from ..tree.registry import node_type
from ..tree.structure import LEAF, TreeDef


def structure_of_value(value):
    """The TreeDef of a compile-time value: a tuple or tree node of atoms (None a node without
    children, as ``adcompile.tree.flatten`` takes it)."""
    if isinstance(value, NoneValue):
        return TreeDef(node_type(None), None, ())
    if isinstance(value, TreeValue):
        return TreeDef(value.node, value.aux, [structure_of_value(item) for item in value.items])
    if isinstance(value, TupleValue):
        return TreeDef(node_type(()), None, [structure_of_value(item) for item in value.items])
    return LEAF


def leaves_of_value(value):
    """The atoms of a compile-time value, in the order of ``structure_of_value``."""
    if isinstance(value, NoneValue):
        return []
    if isinstance(value, TupleValue):
        return [leaf for item in value.items for leaf in leaves_of_value(item)]
    return [value]


def value_of_tree(result):
    """A Python pytree of atoms (a gradient dict, a (value, grads) pair) as a compile-time value."""
    leaves, treedef = flatten(result)
    return TreeSlot(treedef).frontend_value(leaves)


def results_with_aux(derived, sig, outputs):
    """The results of ``derived`` (``has_aux=True``) as its call returns them, a Python tree of atoms."""
    aux_def = aux_structure(derived.base.ir(sig), derived.name)
    if derived.kind in ("hessian", "jacobian"):
        return finish_matrix_with_aux(aux_def)(tuple(outputs))
    n_wrt = len(derived.resolved_wrt(sig))
    return finish_with_aux(derived.kind, aux_def, n_wrt, derived.wrt_is_tuple)(tuple(outputs))


def call_with_trees(tr, derived, args, node, inline):
    """``derived(*args)`` inside compiled code where some of ``args`` are pytrees; ``inline(tr,
    flat_derived, atoms, node)`` inlines a derived function's code: (signature, results)."""
    derived.check_arity(args)
    slots = [TreeSlot(structure_of_value(a)) if isinstance(a, TupleValue) else None for a in args]
    atoms = [tr.as_atom(leaf, node) for a in args
             for leaf in (leaves_of_value(a) if isinstance(a, TupleValue) else [a])]
    positions = trainable_positions(slots)
    try:
        flat, grouped = flat_chain(derived, slots, positions)
    except CallError as error:
        raise tr.error(str(error), node, CallError) from None
    sig, outputs = inline(tr, flat, atoms, node)
    if flat.has_aux:
        result = results_with_aux(flat, sig, outputs)
    elif flat.kind in ("hessian", "jacobian"):
        return outputs[0]
    else:
        values, grads = flat.split(sig, outputs)
        result = grads if flat.kind == "grad" else (values, grads)
    if grouped is not None:
        result = regroup_result(derived, positions, grouped, result)
    return value_of_tree(result)
