"""Jacobians and Hessians with respect to a Module argument: dicts keyed like ``named_parameters()``
(dicts of dicts for the Hessian), assembled column by column from flat derived functions; with
respect to a pytree argument, the same in the argument's structure (JAX's layout: the Jacobian
has the argument's structure, the Hessian that structure with each leaf holding it again)."""
from collections import OrderedDict

import numpy as np

from ..api.compiled import as_compiled, CompiledFunction
from ..api.directions import unit_tensors
from ..errors import CallError
from .flat_functions import TreeEntry, flat_arguments, flat_function, trainable_positions


def plain_compiled(f, what):
    compiled = as_compiled(f)
    if not isinstance(compiled, CompiledFunction):
        raise CallError(f"{what} with Module arguments takes a plain or compiled Python function, not "
                        f"{compiled!r}; with respect to a Module, take {what} of the function itself "
                        "(adcompile.hessian(f, wrt=k) is the second derivative)")
    return compiled

def matrix_of_tree(fn, args):
    """A Hessian or Jacobian (``fn``) with respect to a Module or pytree argument: dicts keyed like
    ``named_parameters()``, or the argument's structure."""
    if fn.has_aux:
        raise CallError(f"{fn.name}: has_aux=True with respect to a Module, tuple, list or dict argument "
                        "is not supported; return the aux from another call")
    if fn.kind == "hessian":
        return hessian_of_tree(fn.base, fn.wrt[0], args)
    return jacobian_of_tree(fn.base, fn.wrt[0], fn.mode, args)


def _leaves_of(args, index, what):
    """[(flat index, name)] of the trainable parameters of the Module argument ``index``."""
    entries = trainable_positions(args)[index]
    if not entries:
        raise CallError(f"{what}: the Module argument {index} has no parameter with requires_grad=True")
    return entries


def jacobian_of_tree(f, index, mode, args):
    """The Jacobian of ``f`` with respect to the Module argument ``index``: a dict keyed like
    ``named_parameters()`` of arrays of shape ``out.shape + parameter.shape`` (as JAX's
    jacobian of a dict of parameters, and torch.func.jacrev)."""
    compiled = plain_compiled(f, "jacobian")
    leaves = _leaves_of(args, index, "jacobian")
    flat = flat_function(compiled.pyfunc, args, compiled.backend)
    flat_args = flat_arguments(args)
    out = flat.run(flat_args)
    if isinstance(out, tuple):
        raise CallError("jacobian: the function must return one array or scalar")
    out_shape = np.shape(out)
    shapes = [np.shape(flat_args[k]) for k, _ in leaves]
    result = OrderedDict()
    if mode == "rev":
        derived = flat.chain((("vjp", tuple(k for k, _ in leaves), False),))
        dtype = np.result_type(out, *(flat_args[k] for k, _ in leaves))
        rows = [derived.call_with_extra(flat_args, (e,))[-len(leaves):] for e in unit_tensors(out_shape, dtype)]
        for j, ((_, name), shape) in enumerate(zip(leaves, shapes)):
            stacked = np.stack([np.reshape(row[j], -1) for row in rows]) if rows else np.zeros((0, int(np.prod(shape))))
            result[name] = stacked.reshape(out_shape + shape)
    else:
        for (k, name), shape in zip(leaves, shapes):
            derived = flat.chain((("jvp", (k,), True),))
            dtype = np.result_type(out, flat_args[k])
            columns = [np.reshape(derived.call_with_extra(flat_args, (e,))[-1], -1)
                       for e in unit_tensors(shape, dtype)]
            matrix = np.stack(columns, axis=1) if columns else np.zeros((int(np.prod(out_shape)), 0))
            result[name] = matrix.reshape(out_shape + shape)
    if isinstance(leaves, TreeEntry):
        return leaves.rebuild(list(result.values()))
    return result


def hessian_of_tree(f, index, args):
    """The Hessian of scalar ``f`` with respect to the Module argument ``index``: a dict of dicts,
    ``H[a][b]`` of shape ``a.shape + b.shape`` for parameter names a, b (as JAX's hessian of a dict
    of parameters, and torch.func.hessian). One forward-over-reverse column per parameter entry."""
    compiled = plain_compiled(f, "hessian")
    leaves = _leaves_of(args, index, "hessian")
    flat = flat_function(compiled.pyfunc, args, compiled.backend)
    flat_args = flat_arguments(args)
    indices = tuple(k for k, _ in leaves)
    result = OrderedDict((name, OrderedDict()) for _, name in leaves)
    for k, a in leaves:
        column = flat.chain((("grad", indices, False), ("jvp", (k,), True)))
        shape = np.shape(flat_args[k])
        columns = [column.call_with_extra(flat_args, (e,)) for e in unit_tensors(shape, flat_args[k].dtype)]
        for j, (m, b) in enumerate(leaves):
            other = np.shape(flat_args[m])
            stacked = np.stack([np.asarray(c[j] if isinstance(c, tuple) else c) for c in columns])
            result[a][b] = stacked.reshape(shape + other)
    if isinstance(leaves, TreeEntry):
        return leaves.rebuild([leaves.rebuild(list(row.values())) for row in result.values()])
    return result
