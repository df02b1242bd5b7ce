"""Jacobians and Hessians of calls with Module or pytree arguments, in JAX's structure.

``jacobian(f, wrt=k)`` where argument ``k`` is a dict (a Module, a tuple ...), or where ``f``
(a compiled function, or a derivative such as ``grad(loss)``) returns a dict or a tuple, is a
pytree of blocks: outer structure ``f``'s result's, inner structure the argument's (a Module's a
dict keyed like ``named_parameters()``). ``hessian(f, wrt=k)`` is the Jacobian of
``grad(f, wrt=k)`` by columns (forward over reverse): for a dict argument, a dict of dicts.
``matrix_layout`` says what such a matrix is assembled in (``api/assembled_matrices.py``); a
matrix of one array with respect to one array is one generated function of the flat chain.
"""
from ..api.assembled_matrices import MatrixLayout
from ..api.derived import DerivedFunction
from ..errors import CallError
from .chains import flat_chain, flat_wrt, regroup, results_tree_of_call, static_wrt_error
from .flat_functions import flat_arguments


def matrix_layout(fn, args, positions):
    """The MatrixLayout of the Hessian or Jacobian ``fn`` called with ``args`` (``positions``
    theirs), or None where one generated function computes it (an array output, an array
    argument)."""
    k = fn.wrt[0]
    entry = positions[k]
    if entry is None:
        raise static_wrt_error(fn.name, k)
    tree_argument = isinstance(entry, list)
    if fn.has_aux:
        if tree_argument:
            raise CallError(f"{fn.name}: has_aux=True with respect to a Module, tuple, list or dict argument "
                            "is not supported; return the aux from another call")
        return None
    function = DerivedFunction(fn.base, "grad", k) if fn.kind == "hessian" else fn.base
    flat, _ = flat_chain(function, args, positions)
    outputs = results_tree_of_call(function, args, positions, flat, flat_arguments(args))
    if not tree_argument and outputs.is_leaf:
        return None
    mode = "fwd" if fn.kind == "hessian" else fn.mode
    return MatrixLayout(flat, flat_wrt(positions, [k], fn.name), lambda blocks: regroup(positions, [k], blocks)[0],
                        outputs, mode)
