"""The simplification passes of a derived function's IR, which ``ir_stages`` can watch.

``DerivedFunction.ir`` runs its passes through :func:`optimize_observed`: normally that is
``passes.pipeline.optimize`` itself; while :func:`observing` is active (``ir_stages.py``) it runs
the passes one at a time and reports each result that changed something.
"""
import contextlib
import contextvars

from .pipeline import CLEAN_UP, FINAL, optimize

_observer = contextvars.ContextVar("adcompile_ir_observer", default=None)
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
