"""Forward-mode derivatives with Module and pytree arguments: ``jvp`` and ``hvp`` whose tangents of a
Module are dicts keyed like ``named_parameters()`` (a missing key: that parameter is not
differentiated), and of a pytree (a dict, list, tuple of arrays) a pytree of the same structure."""
from collections import OrderedDict

from ..api.compiled import as_compiled, CompiledFunction
from ..api.derived import DerivedFunction
from ..derivatives.forward import _tangent_like, outputs_and_tangents
from ..errors import CallError
from ..modules.module import Module
from ..tree import flatten as tree_flatten
from ..tree.structure import path_text
from .flat_functions import TreeEntry, flat_arguments, flat_function, trainable_positions
from .gradients import composition_error, plain_compiled, run_with_modules


def _flat_tangents(what, primals, tangents, positions):
    """Tangents of the flat arguments from the user's (a dict keyed like named_parameters()
    for a Module, a missing key meaning that parameter is not differentiated), and the user
    indices that have a tangent."""
    if len(primals) != len(tangents):
        raise CallError(f"{what}: {len(primals)} primals but {len(tangents)} tangents (use None for "
                        "arguments that are not differentiated)")
    flat_tangents, wrt = [], []
    for k, (value, tangent) in enumerate(zip(primals, tangents)):
        if isinstance(positions[k], TreeEntry):
            flat_tangents += _tree_tangents(what, k, value, tangent, positions[k].treedef)
            if tangent is not None:
                wrt.append(k)
        elif isinstance(value, Module):
            tangent = {} if tangent is None else tangent
            if not isinstance(tangent, dict):
                raise CallError(f"{what}: the tangent of the Module argument {k} must be a dict keyed like "
                                f"named_parameters(), not {type(tangent).__name__}")
            trainable = {name for _, name in positions[k]}
            unknown = set(tangent) - trainable
            if unknown:
                raise CallError(f"{what}: tangent keys {sorted(unknown)} are not parameters with requires_grad "
                                f"of the Module argument {k}")
            for name, param in value.named_parameters():
                flat_tangents.append(None if name not in tangent else _tangent_like(tangent[name], param.data, name))
            flat_tangents += [None] * sum(1 for _ in value.named_buffers())
            if tangent:
                wrt.append(k)
        else:
            flat_tangents.append(tangent if tangent is None else _tangent_like(tangent, value, f"argument {k}"))
            if tangent is not None:
                wrt.append(k)
    return flat_tangents, wrt


def _tree_tangents(what, k, value, tangent, treedef):
    """The leaves of the tangent of the pytree argument ``k`` (None: not differentiated)."""
    leaves, _ = tree_flatten(value)
    if tangent is None:
        return [None] * len(leaves)
    tangent_leaves, tangent_def = tree_flatten(tangent)
    if tangent_def != treedef:
        raise CallError(f"{what}: the tangent of argument {k} must have the structure of the argument, "
                        f"{treedef}, not {tangent_def}")
    return [_tangent_like(t, x, path_text(f"argument {k}", path))
            for t, x, path in zip(tangent_leaves, leaves, treedef.paths())]


def _tangent_spec(flat_tangents):
    indices = tuple(k for k, t in enumerate(flat_tangents) if t is not None)
    return indices, tuple(flat_tangents[k] for k in indices)


def jvp_with_modules(f, primals, tangents):
    """``jvp`` where some primals are Modules (their tangents dicts keyed like
    ``named_parameters()``): ``(f(*primals), J @ tangents)``."""
    compiled = as_compiled(f)
    positions = trainable_positions(primals)
    flat_tangents, wrt = _flat_tangents("jvp", primals, tangents, positions)
    indices, extra = _tangent_spec(flat_tangents)
    if not indices:
        raise CallError("jvp: every tangent is None (or an empty dict): nothing to differentiate")
    if isinstance(compiled, CompiledFunction):
        flat = flat_function(compiled.pyfunc, primals, compiled.backend)
        args = flat_arguments(primals)
        result = flat.chain((("jvp", indices, False),)).call_with_extra(args, extra)
        return outputs_and_tangents(flat, flat.signature(args), result)
    else:  # jvp of a derived function: the same transforms of the flat function
        modules = [k for k in wrt if isinstance(primals[k], Module)]
        if modules:
            raise composition_error(DerivedFunction(compiled, "jvp", tuple(wrt)), modules[0])
        result = run_with_modules(DerivedFunction(compiled, "jvp", tuple(wrt)), primals, extra)
        returns_tuple = compiled.user_returns_tuple(None)
    n_out = len(result) // 2
    outs, touts = tuple(result[:n_out]), tuple(result[n_out:])
    if returns_tuple:
        return outs, touts
    return outs[0], touts[0]


def hvp_with_modules(f, primals, tangents):
    """``hvp`` where some primals are Modules: their tangents are dicts keyed like
    ``named_parameters()`` (a missing key: that parameter is not differentiated), and so are
    their parts of H @ v."""
    compiled = plain_compiled(f, "hvp")
    positions = trainable_positions(primals)
    flat_tangents, wrt = _flat_tangents("hvp", primals, tangents, positions)
    indices, extra = _tangent_spec(flat_tangents)
    if not indices:
        raise CallError("hvp: every tangent is None (or an empty dict): nothing to differentiate")
    flat = flat_function(compiled.pyfunc, primals, compiled.backend)
    column = flat.chain((("grad", indices, False), ("jvp", indices, True)))
    result = column.call_with_extra(flat_arguments(primals), extra)
    result = result if isinstance(result, tuple) else (result,)
    differentiated = iter(result)
    out = []
    for k in wrt:
        if isinstance(positions[k], TreeEntry):
            out.append(positions[k].rebuild([next(differentiated) for _ in positions[k]]))
        elif isinstance(primals[k], Module):
            names = [name for name, _ in primals[k].named_parameters() if name in tangents[k]]
            out.append(OrderedDict((name, next(differentiated)) for name in names))
        else:
            out.append(next(differentiated))
    return out[0] if len(out) == 1 else tuple(out)
