"""The IR after each stage of the compiler, for people debugging it (``adcompile source --ir``).

    parsed            the frontend's typed IR of the user's function (frontend/parse.py)
    <kind>: transformed   reverse mode (transforms/reverse/) or forward mode
                      (transforms/forward.py) applied to the IR below it
    <kind>: <pass>    each simplification pass that changed something (passes/simplify.py,
                      cse.py, dce.py), in the order the pipeline runs them
    lowered           the Python source generated from the final IR (codegen/python.py)

Derived functions of derived functions (``jvp(grad(f))``) show each transform in turn. The
stages are recorded by the real pipeline: ``DerivedFunction.ir`` runs its passes through
:func:`optimize_observed`, which, while :func:`ir_stages` watches, runs them one at a time
and notes each result; otherwise it is ``passes.pipeline.optimize`` itself.
"""
import contextvars

from .codegen.python import generate
from .inspection import resolve, specialised
from .ir.printer import format_function
from .passes.cse import eliminate_common_subexpressions
from .passes.dce import eliminate_dead_code
from .passes.pipeline import optimize
from .passes.simplify import simplify

_observer = contextvars.ContextVar("adcompile_ir_observer", default=None)

# The passes of passes.pipeline.optimize, in its order (tests check that both agree).
PASSES = (("simplify", simplify), ("common subexpressions", eliminate_common_subexpressions),
          ("dead code", eliminate_dead_code))
ROUNDS = 4


def optimize_observed(fn, name):
    """``optimize(fn)``; while :func:`ir_stages` watches, pass by pass, noting each result."""
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


def ir_stages(fn, /, *args, **kwargs):
    """``[(stage name, text)]``: the IR after each stage, then the generated source.

    >>> import numpy as np, adcompile
    >>> from adcompile.ir_stages import ir_stages
    >>> @adcompile.compile(backend="python")
    ... def square(x):
    ...     return x * x
    >>> [name for name, _ in ir_stages(adcompile.grad(square), 3.0)]
    ['parsed', 'grad(square): transformed', 'grad(square): dead code (round 1)', 'lowered']
    """
    target, sig = resolve(specialised(fn, "ir"), args, "ir", kwargs)  # Module arguments: the flat function
    root = target
    while hasattr(root, "base"):
        root = root.base
    stages = [("parsed", format_function(root.primal_ir(sig)))]
    token = _observer.set(lambda name, ir_fn: stages.append((name, format_function(ir_fn))))
    try:
        final = target.ir(sig)
    finally:
        _observer.reset(token)
    stages.append(("lowered", generate(final, origin=target.origin())))
    return stages
