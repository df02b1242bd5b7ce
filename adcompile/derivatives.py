"""Forward mode and second order: ``jvp``, ``hvp``, ``hessian``, ``jacobian``.

All of them are built from the two transforms: ``jvp`` is forward mode, ``hvp`` and
``hessian`` are forward mode applied to the reverse-mode gradient (forward over reverse),
``jacobian`` stacks vjps (mode="rev") or jvps (mode="fwd") of unit vectors.
"""
import numpy as np

from .api import DerivedFunction, as_compiled, wrt_indices
from .errors import CallError
from .ir.types import type_of_value


def _float_positions(args):
    return [k for k, a in enumerate(args) if (type_of_value(a) is not None and type_of_value(a).is_float)]


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _tangent_like(t, x, name):
    t = np.asarray(t, dtype=np.result_type(x, np.float32)) if isinstance(x, np.ndarray) else float(t)
    if np.shape(t) != np.shape(x):
        raise CallError(f"the tangent for '{name}' has shape {np.shape(t)} but the argument has shape "
                        f"{np.shape(x)}")
    return t


def jvp(f, primals, tangents):
    """JAX-style forward mode: ``(f(*primals), J @ tangents)``.

    ``tangents`` has one entry per primal; use None for arguments that are not differentiated
    (integer arguments must get None).
    """
    compiled = as_compiled(f)
    primals, tangents = _as_tuple(primals), _as_tuple(tangents)
    if len(primals) != len(tangents):
        raise CallError(f"jvp: {len(primals)} primals but {len(tangents)} tangents (use None for "
                        "arguments that are not differentiated)")
    wrt = tuple(k for k, t in enumerate(tangents) if t is not None)
    names = compiled.param_names
    extra = tuple(_tangent_like(tangents[k], primals[k], names[k]) for k in wrt)
    derived = DerivedFunction(compiled, "jvp", wrt)
    result = derived.call_with_extra(primals, extra)
    n_out = len(result) // 2
    outs, touts = tuple(result[:n_out]), tuple(result[n_out:])
    if compiled.user_returns_tuple(derived.signature(primals)):
        return outs, touts
    return outs[0], touts[0]


def hvp(f, primals, tangents):
    """Hessian-vector product H @ v of scalar ``f`` without forming H (forward over reverse).

    ``tangents`` has one entry per primal (None where not differentiated); returns H·v for the
    arguments that have tangents (a single array if only one, else a tuple).
    """
    primals, tangents = _as_tuple(primals), _as_tuple(tangents)
    wrt = tuple(k for k, t in enumerate(tangents) if t is not None)
    gradient = DerivedFunction(as_compiled(f), "grad", wrt)
    _, result = jvp(gradient, primals, tangents)
    result = _as_tuple(result)
    return result[0] if len(wrt) == 1 else result


def hessian(f, wrt=0):
    """A function computing the Hessian of scalar ``f`` with respect to argument ``wrt``,
    shape ``x.shape + x.shape`` (forward over reverse, one column per tangent)."""
    compiled = as_compiled(f)
    (index,), is_tuple = wrt_indices(compiled, wrt)
    if is_tuple:
        raise CallError("hessian: wrt must be a single argument")
    gradient = DerivedFunction(compiled, "grad", index)
    column = DerivedFunction(gradient, "jvp", index, tangents_only=True)

    def hessian_fn(*args):
        x = args[index]
        shape = np.shape(x)
        size = int(np.prod(shape))
        dtype = x.dtype if isinstance(x, np.ndarray) else np.float64
        out = np.empty((size,) + shape, dtype=dtype)
        for k in range(size):
            e = np.zeros(size, dtype=dtype)
            e[k] = 1.0
            tangent = e.reshape(shape) if shape else 1.0
            result = column.call_with_extra(args, (tangent,))
            out[k] = result[-1]
        return out.reshape(shape + shape) if shape else float(out[0])

    hessian_fn.derived = column
    return hessian_fn


def jacobian(f, wrt=0, mode="rev"):
    """A function computing the Jacobian of ``f`` (array-valued) with respect to argument
    ``wrt``, shape ``out.shape + x.shape``. ``mode`` is "rev" (one vjp per output element)
    or "fwd" (one jvp per input element)."""
    if mode not in ("rev", "fwd"):
        raise CallError("jacobian: mode must be 'rev' or 'fwd'")
    compiled = as_compiled(f)
    (index,), is_tuple = wrt_indices(compiled, wrt)
    if is_tuple:
        raise CallError("jacobian: wrt must be a single argument")
    # Reverse mode of a derived function is forward mode here (the result is the same matrix).
    use_forward = mode == "fwd" or isinstance(compiled, DerivedFunction)
    derived = DerivedFunction(compiled, "jvp" if use_forward else "vjp", index)

    def jacobian_fn(*args):
        x = args[index]
        out = compiled(*args)
        if isinstance(out, tuple):
            raise CallError("jacobian: the function must return one array or scalar")
        in_shape, out_shape = np.shape(x), np.shape(out)
        dtype = np.result_type(out, x) if isinstance(x, np.ndarray) else np.float64
        if use_forward:
            columns = []
            for k in range(int(np.prod(in_shape))):
                e = np.zeros(int(np.prod(in_shape)), dtype=dtype)
                e[k] = 1.0
                result = derived.call_with_extra(args, (e.reshape(in_shape) if in_shape else 1.0,))
                columns.append(np.reshape(result[-1], -1))
            matrix = np.stack(columns, axis=1) if columns else np.zeros((int(np.prod(out_shape)), 0))
        else:
            rows = []
            for k in range(int(np.prod(out_shape))):
                e = np.zeros(int(np.prod(out_shape)), dtype=dtype)
                e[k] = 1.0
                result = derived.call_with_extra(args, (e.reshape(out_shape) if out_shape else 1.0,))
                rows.append(np.reshape(result[-1], -1))
            matrix = np.stack(rows, axis=0)
        return matrix.reshape(out_shape + in_shape)

    jacobian_fn.derived = derived
    return jacobian_fn


__all__ = ["jvp", "hvp", "hessian", "jacobian", "_float_positions"]
