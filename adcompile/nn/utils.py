"""``adcompile.nn.utils``: PyTorch's gradient clipping on the parameters' ``.grad``
(eager: after ``adcompile.backward``, before ``optimizer.step()``).

``adcompile.fit`` and ``adcompile.train_step`` take the same clipping as options
(``clip_grad_norm=``, ``clip_grad_value=``) and apply it inside the compiled step
(``training/clipping.py``).
"""
import numpy as np

from ..errors import AdCompileError
from ..modules.parameter import Parameter

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


class NonFiniteNormError(AdCompileError, RuntimeError):
    """``clip_grad_norm_(..., error_if_nonfinite=True)`` met a nan or infinite total norm."""


def _grads(parameters, what):
    if isinstance(parameters, Parameter):
        parameters = [parameters]
    grads = []
    for param in parameters:
        if not isinstance(param, Parameter):
            raise AdCompileError(f"{what} takes adcompile.Parameters (e.g. model.parameters()), "
                                 f"not {type(param).__name__}")
        if param.grad is not None:
            grads.append(param.grad)
    return grads


def vector_norm(array, norm_type):
    """``torch.linalg.vector_norm``: the ``norm_type``-norm of all the entries (inf, -inf, 0 too)."""
    flat = np.abs(np.ravel(array))
    if norm_type == np.inf:
        return flat.max(initial=0.0).astype(flat.dtype)
    if norm_type == -np.inf:
        return flat.min(initial=np.inf).astype(flat.dtype)
    if norm_type == 0:
        return np.asarray(np.count_nonzero(flat), dtype=flat.dtype)[()]
    if norm_type == 2:
        return np.sqrt(np.dot(flat, flat))
    return np.sum(flat ** norm_type) ** (1.0 / norm_type)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False):
    """Scale the gradients together so that their total ``norm_type``-norm (the norm of the
    per-parameter norms) is at most ``max_norm``; returns the total norm before clipping.
    As PyTorch: the factor is ``min(1, max_norm / (total_norm + 1e-6))``; parameters without
    ``.grad`` are skipped; with none the norm is 0.0.

    >>> import numpy as np, adcompile
    >>> w, b = adcompile.Parameter(np.zeros(2)), adcompile.Parameter(np.zeros(1))
    >>> w.grad, b.grad = np.array([3.0, 0.0]), np.array([4.0])
    >>> float(adcompile.nn.utils.clip_grad_norm_([w, b], max_norm=1.0))  # sqrt(3^2 + 4^2)
    5.0
    >>> np.round(w.grad, 6), np.round(b.grad, 6)
    (array([0.6, 0. ]), array([0.8]))
    >>> round(float(adcompile.nn.utils.clip_grad_norm_([w, b], max_norm=1.0, norm_type="inf")), 6)
    0.8
    """
    norm_type = float(norm_type)
    grads = _grads(parameters, "clip_grad_norm_")
    if not grads:
        return np.float64(0.0)
    dtype = np.result_type(*grads)
    total_norm = vector_norm(np.array([vector_norm(grad, norm_type) for grad in grads], dtype=dtype), norm_type)
    if error_if_nonfinite and not np.isfinite(total_norm):
        raise NonFiniteNormError(f"the total norm of order {norm_type} of the gradients is {total_norm}, so they "
                                 "cannot be clipped; find the nan or inf gradient, or pass "
                                 "error_if_nonfinite=False to scale by it anyway")
    clip_coef = min(dtype.type(max_norm) / (total_norm + dtype.type(1e-6)), dtype.type(1.0))
    for grad in grads:
        grad *= clip_coef
    return total_norm


def clip_grad_value_(parameters, clip_value):
    """Clip every gradient entry into ``[-clip_value, clip_value]``, in place.

    >>> import numpy as np, adcompile
    >>> w = adcompile.Parameter(np.zeros(3))
    >>> w.grad = np.array([-2.0, 0.5, 3.0])
    >>> adcompile.nn.utils.clip_grad_value_([w], clip_value=1.0)
    >>> w.grad
    array([-1. ,  0.5,  1. ])
    """
    clip_value = float(clip_value)
    for grad in _grads(parameters, "clip_grad_value_"):
        np.clip(grad, -clip_value, clip_value, out=grad)
