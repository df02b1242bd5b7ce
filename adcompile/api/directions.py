"""Tangents and cotangents as the generated code takes them, and jvp's results as the user gets
them: shared by the function forms (``jvp``, ``hvp``, ``vjp``) of plain and flattened calls."""
import numpy as np

from ..errors import CallError
from ..frontend.values import is_flat_tuple
from ..ir.types import type_of_value
from ..tree import flatten as tree_flatten
from ..tree.structure import leaves_in


def tangent_like(t, x, name):
    """The tangent ``t`` of the argument ``x`` (called ``name`` in errors) as the generated code
    takes it: an array of ``x``'s shape and float dtype, or a float."""
    if type(t) is np.ndarray and type(x) is np.ndarray and t.shape == x.shape and x.dtype.kind == "f" \
            and (t.dtype is x.dtype or t.dtype == x.dtype):
        return t  # already what the generated code takes: the common case, kept cheap
    if isinstance(x, np.ndarray):
        t = np.asarray(t, dtype=np.result_type(x, np.float32))
    elif isinstance(x, np.floating) and np.shape(t) == ():
        t = type(x)(t)  # a float32 argument's tangent is a float32, as an array's has its dtype
    else:
        t = float(t)
    if np.shape(t) != np.shape(x):
        raise CallError(f"the tangent for '{name}' has shape {np.shape(t)} but the argument has shape "
                        f"{np.shape(x)}")
    return t


def unit_tensors(shape, dtype):
    """The standard basis of arrays of ``shape`` (a scalar shape gives the number 1.0); the
    Hessians and Jacobians with respect to a Module or pytree argument are built from them."""
    size = int(np.prod(shape))
    for k in range(size):
        e = np.zeros(size, dtype=dtype)
        e[k] = 1.0
        yield e.reshape(shape) if shape else 1.0


def outputs_and_tangents(compiled, sig, result, structure=None):
    """``(out, tangent)`` of jvp from the code's ``*outs, *touts``: each as ``compiled`` returns
    its result (one value, a tuple, or a list or dict rebuilt from its leaves), or in
    ``structure``, the TreeDef of the user's results where the call was flattened."""
    n_out = len(result) // 2
    outs, touts = tuple(result[:n_out]), tuple(result[n_out:])
    if structure is None:
        structure = getattr(compiled.primal_ir(sig), "result_structure", None)
    if structure is not None:
        return structure.unflatten(outs), structure.unflatten(touts)
    if compiled.user_returns_tuple(sig):
        return outs, touts
    return outs[0], touts[0]


def cotangent_leaves(base_ir, cotangents, structure=None):
    """The cotangents of the code's flat results from the user's: one per output, or (for a
    function returning a tuple, list or dict) one pytree of the output's structure, which is
    ``structure`` where given (a flattened call's: a gradient's is its argument's)."""
    if structure is None:
        structure = getattr(base_ir, "result_structure", None)
    if structure is not None and not structure.is_leaf and not is_flat_tuple(structure):
        given = cotangents[0] if len(cotangents) == 1 else cotangents
        leaves = leaves_in(structure, given)
        if leaves is None:
            raise CallError(f"vjp: the cotangent must have the structure of the output, {structure}, not "
                            f"{tree_flatten(given)[1]}")
        cotangents = tuple(leaves)
    elif len(cotangents) == 1 and isinstance(cotangents[0], tuple):
        cotangents = cotangents[0]
    cotangents = tuple(np.asarray(c, dtype=float) if isinstance(c, list) else c for c in cotangents)
    # a 0-d array is a number (the generated code updates scalar adjoints with +=)
    cotangents = tuple(c[()] if isinstance(c, np.ndarray) and c.ndim == 0 else c for c in cotangents)
    check_against(cotangents, base_ir.results, "cotangent")
    return tuple(_with_dtype_of(c, out) for c, out in zip(cotangents, base_ir.results))


def _with_dtype_of(cotangent, out):
    """A cotangent has its output's float dtype, as a tangent has its argument's, whether it is
    an array or a number (the code's adjoints are typed by their values: a float64 cotangent of
    a float32 output would change an adjoint's dtype between iterations of a loop, or between
    the branches that update it, which numba cannot type)."""
    if not out.type.is_float:
        return cotangent
    dtype = np.dtype(out.type.dtype)
    if isinstance(cotangent, np.ndarray):
        return cotangent if cotangent.dtype == dtype else cotangent.astype(dtype)
    if isinstance(cotangent, (float, int, np.floating, np.integer)) and not isinstance(cotangent, bool) \
            and np.asarray(cotangent).dtype != dtype:
        return dtype.type(cotangent)
    return cotangent


def check_against(values, outs, what):
    """A clear error unless ``values`` (cotangents) match the outputs ``outs`` one to one, in ndim."""
    if len(values) != len(outs):
        raise CallError(f"expected {len(outs)} {what}(s), one per output, got {len(values)}")
    for value, out in zip(values, outs):
        type_ = type_of_value(value)
        if type_ is None or type_.ndim != out.type.ndim:
            raise CallError(f"a {what} must match its output: expected ndim {out.type.ndim}, got "
                            f"{type(value).__name__} {np.shape(value)}")
