"""The simplification passes of a derived function's IR, which ``ir_stages`` can watch.

``DerivedFunction.ir`` runs its passes through :func:`optimize_observed`: normally that is
``passes.pipeline.optimize`` itself; while :func:`observing` is active (``ir_stages.py``) it runs
the passes one at a time and reports each result that changed something.
"""
import contextlib
import contextvars

from .copy_then_add import fold_copies_then_adds
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .first_contribution import assign_first_contributions
from .pipeline import optimize
from .simplify import simplify
from .static_shapes import use_static_shapes

_observer = contextvars.ContextVar("adcompile_ir_observer", default=None)

# The passes of passes.pipeline.optimize, in its order (tests check that both agree): the
# clean-up passes to a fixpoint, then first contributions and copies then adds, then the
# clean-up passes again.
CLEAN_UP = (("simplify", simplify), ("static shapes", use_static_shapes),
            ("common subexpressions", eliminate_common_subexpressions), ("dead code", eliminate_dead_code))
FINAL = (("first contributions", assign_first_contributions), ("copies then adds", fold_copies_then_adds))
PASSES = CLEAN_UP + FINAL
ROUNDS = 4


def _clean_up_observed(fn, name, observe, stage):
    for round_number in range(1, ROUNDS + 1):
        changed = False
        for pass_name, run_pass in CLEAN_UP:
            if run_pass(fn):
                changed = True
                observe(f"{name}: {pass_name} ({stage}round {round_number})", fn)
        if not changed:
            return


def optimize_observed(fn, name):
    """``optimize(fn)``; while :func:`observing`, pass by pass, reporting each result."""
    observe = _observer.get()
    if observe is None:
        return optimize(fn, rounds=ROUNDS)
    observe(f"{name}: transformed", fn)
    _clean_up_observed(fn, name, observe, "")
    changed = False
    for pass_name, run_pass in FINAL:
        if run_pass(fn):
            changed = True
            observe(f"{name}: {pass_name}", fn)
    if changed:
        _clean_up_observed(fn, name, observe, "after first contributions, ")
    return fn


@contextlib.contextmanager
def observing(observe):
    """Within the block, :func:`optimize_observed` calls ``observe(stage name, IR function)``."""
    token = _observer.set(observe)
    try:
        yield
    finally:
        _observer.reset(token)
