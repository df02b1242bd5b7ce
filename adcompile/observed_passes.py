"""The simplification passes of a derived function's IR, which ``ir_stages`` can watch.

``DerivedFunction.ir`` runs its passes through :func:`optimize_observed`: normally that is
``passes.pipeline.optimize`` itself; while :func:`observing` is active (``ir_stages.py``) it runs
the passes one at a time and reports each result that changed something.
"""
import contextlib
import contextvars

from .passes.cse import eliminate_common_subexpressions
from .passes.dce import eliminate_dead_code
from .passes.pipeline import optimize
from .passes.simplify import simplify
from .passes.static_shapes import use_static_shapes

_observer = contextvars.ContextVar("adcompile_ir_observer", default=None)

# The passes of passes.pipeline.optimize, in its order (tests check that both agree).
PASSES = (("simplify", simplify), ("static shapes", use_static_shapes), ("common subexpressions", eliminate_common_subexpressions),
          ("dead code", eliminate_dead_code))
ROUNDS = 4


def optimize_observed(fn, name):
    """``optimize(fn)``; while :func:`observing`, pass by pass, reporting each result."""
    observe = _observer.get()
    if observe is None:
        return optimize(fn, rounds=ROUNDS)
    observe(f"{name}: transformed", fn)
    for round_number in range(1, ROUNDS + 1):
        changed = False
        for pass_name, run_pass in PASSES:
            if run_pass(fn):
                changed = True
                observe(f"{name}: {pass_name} (round {round_number})", fn)
        if not changed:
            break
    return fn


@contextlib.contextmanager
def observing(observe):
    """Within the block, :func:`optimize_observed` calls ``observe(stage name, IR function)``."""
    token = _observer.set(observe)
    try:
        yield
    finally:
        _observer.reset(token)
