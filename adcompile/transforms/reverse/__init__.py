"""Reverse mode: a primal IR function -> an IR function computing its vector-Jacobian product.

The result has a forward sweep (the primal statements, plus saves of values that are about
to be overwritten and that the backward sweep reads) and a backward sweep (the statements in
reverse, each replaced by its primitive's reverse rule from ``ir/primitives/``, loops run
backwards, branches re-taken on the recorded condition, overwritten values restored). Example:

    def f(x):                         def f_grad(x):
        y = np.sin(x)                     y = np.sin(x)
        return y * y                      by = 2 * y ...         # grad of: return y * y
                                          bx = by * np.cos(x)    # grad of: y = np.sin(x)
                                          return bx

Writes into arguments are always undone, so derived functions leave their arguments
unchanged; writes through memory shared by two variables are rejected (``scopes.py``).
``for`` loops with break/return arrive as counted while loops (``frontend/translator/early_exits.py``), so a
last, partly run iteration is replayed exactly.

The parts: ``taping.py`` (what the forward sweep saves), ``liveness.py`` (what the backward
sweep reads; the fixpoint), ``sweep.py`` (the backward sweep), ``context.py`` (the interface
a region's own reverse rule gets), ``checkpointing.py`` and ``checkpoint_segments.py`` (a
``checkpointed`` loop: its state kept on entry, reversed by the binomial schedule from
snapshots), ``logistic_logs.py`` (logarithms of 1 / (1 + exp(u)) differentiated as one
function), ``transform.py`` (the driver).
"""
from ..zero_skips import without_zero_skips
from .context import ReverseContext
from .logistic_logs import see_through_logistic_logs
from .transform import ReverseTransform

__all__ = ["reverse", "ReverseContext", "ReverseTransform"]


def reverse(fn, wrt, namer, mode="grad"):
    """The IR function computing the gradient (``mode='grad'``: seed 1.0, returns grads;
    ``'value_and_grad'``: returns results then grads; ``'vjp'``: takes one cotangent per result
    after the primal parameters, returns results then grads)."""
    primal = see_through_logistic_logs(without_zero_skips(fn))
    transform = ReverseTransform(primal, wrt, namer, "grad" if mode == "value_and_grad" else mode)
    transform.want_values = mode != "grad"
    result = transform.run()
    if mode == "value_and_grad":
        result.results = list(transform.results) + result.results
        result.name = f"{fn.name}_value_and_grad"
    return result
