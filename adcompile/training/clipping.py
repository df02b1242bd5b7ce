"""Gradient clipping inside the compiled training step: the ``clip_grad_norm=`` and
``clip_grad_value=`` options of ``adcompile.fit`` and ``adcompile.train_step``.

``GradClipping.lines`` writes the statements that clip the gradient variables of the
generated step between the gradient computation and the optimizer's update, with the
formulas of ``adcompile.nn.utils`` (PyTorch's): value clipping first
(``np.clip(g, -value, value)``), then norm clipping, every gradient scaled by
``min(1, max_norm / (total_norm + 1e-6))`` where ``total_norm`` is the ``norm_type``-norm of
all the gradients' entries (2, inf, or any p > 0). ``GradClipping.clip`` applies the same
clipping eagerly to the parameters' ``.grad`` (``adcompile.dask.fit``'s synchronous path).
"""
import math

from ..errors import CallError
from ..nn.utils import clip_grad_norm_, clip_grad_value_


def _option(value, name):
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise CallError(f"{name} must be a number, not {type(value).__name__}") from None
    if not value > 0 or math.isinf(value):
        raise CallError(f"{name} must be a positive finite number, not {value}")
    return value


class GradClipping:
    """The clipping a training program applies (``GradClipping()`` clips nothing)."""

    def __init__(self, max_norm=None, clip_value=None, norm_type=2.0):
        self.max_norm = _option(max_norm, "clip_grad_norm")
        self.clip_value = _option(clip_value, "clip_grad_value")
        norm_type = float(norm_type)
        if not (norm_type > 0):
            raise CallError(f"clip_norm_type must be positive (2.0, float('inf'), ...), not {norm_type}")
        self.norm_type = norm_type

    def lines(self, grads, indent):
        lines = []
        if self.clip_value is not None:
            lines += [f"{indent}{g} = np.clip({g}, {-self.clip_value!r}, {self.clip_value!r})" for g in grads]
        if self.max_norm is not None:
            lines.append(f"{indent}total_norm = {self._norm(grads)}")
            lines.append(f"{indent}clip_coef = np.minimum({self.max_norm!r} / (total_norm + 1e-06), 1.0)")
            lines += [f"{indent}{g} = {g} * clip_coef" for g in grads]
        return lines

    def clip(self, parameters):
        """Clip the ``.grad`` of ``parameters`` in place, eagerly (a gradient put together
        outside a compiled step, such as ``adcompile.dask.fit``'s sum of the workers'
        gradients), with ``nn.utils``'s functions: the formulas of ``lines``."""
        if self.clip_value is not None:
            clip_grad_value_(parameters, self.clip_value)
        if self.max_norm is not None:
            clip_grad_norm_(parameters, self.max_norm, self.norm_type)

    def _norm(self, grads):
        p = self.norm_type
        if p == math.inf:
            terms = [f"np.max(np.abs({g}))" for g in grads]
            expression = terms[0]
            for term in terms[1:]:
                expression = f"np.maximum({expression}, {term})"
            return expression
        if p == 2.0:
            return f"np.sqrt({' + '.join(f'np.sum({g} * {g})' for g in grads)})"
        if p == 1.0:
            return " + ".join(f"np.sum(np.abs({g}))" for g in grads)
        return f"({' + '.join(f'np.sum(np.abs({g}) ** {p!r})' for g in grads)}) ** {1.0 / p!r}"
