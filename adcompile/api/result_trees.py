"""Which pytree a function's flat results make: the structure the user gets them in.

Generated code returns a flat list of arrays and numbers. A compiled function returning a dict
or a nested tuple records that structure (``result_structure``); a gradient with respect to a
dict returns one array per leaf of the dict; ``value_and_grad`` returns the value's leaves,
then the gradients'. ``results_tree`` follows a chain of transforms from its root function
outwards and says, as a ``TreeDef`` over those flat results, how they are regrouped: what
``jvp`` and ``vjp`` of a derived function use to give outputs and take cotangents in the
output's structure, and what a Jacobian of a function returning a dict (or a Hessian with
respect to a dict) is assembled in (``assembled_matrices.py``).
"""
from ..errors import CallError
from ..tree.registry import node_type
from ..tree.structure import LEAF, TreeDef
from .derived_function import DerivedFunction


def tuple_tree(children):
    """The TreeDef of a tuple of the structures ``children``."""
    return TreeDef(node_type(()), None, list(children))


def root_results_tree(fn_ir):
    """The structure of a compiled function's results, from the IR of its code: a dict, list or
    nested tuple it returns, a flat tuple, or one value."""
    structure = getattr(fn_ir, "result_structure", None)
    if structure is not None:
        return structure
    if fn_ir.returns_tuple:
        return tuple_tree([LEAF] * len(fn_ir.results))
    return LEAF


def results_tree(fn, root, wrt_of, gradient_of):
    """The structure of the results of ``fn`` (a compiled function, or a chain of transforms of
    one): ``root`` is the root function's (``root_results_tree``), ``wrt_of(level)`` the argument
    positions a transform differentiates, ``gradient_of(k)`` the structure of the gradient with
    respect to argument ``k`` (a leaf for an array, the argument's structure for a pytree)."""
    levels = []
    while isinstance(fn, DerivedFunction):
        levels.append(fn)
        fn = fn.base
    tree = root
    for level in reversed(levels):
        if level.has_aux:
            raise CallError(f"{level.name}: a derivative of a function taking has_aux=True, with tuple, list or "
                            "dict arguments or results, is not supported; differentiate the function without aux")
        grads = None
        if level.returns_gradients:
            structures = [gradient_of(k) for k in wrt_of(level)]
            grads = tuple_tree(structures) if level.wrt_is_tuple else structures[0]
        tree = level.results_tree(tree, grads)
    return tree
