"""The IR after each stage of the compiler, for people debugging it (``adcompile source --ir``).

    parsed            the frontend's typed IR of the user's function (frontend/parse.py)
    <kind>: transformed   reverse mode (transforms/reverse/) or forward mode
                      (transforms/forward.py) applied to the IR below it
    <kind>: <pass>    each simplification pass that changed something (passes/simplify.py,
                      cse.py, dce.py), in the order the pipeline runs them
    lowered           the Python source generated from the final IR (codegen/python.py)

Derived functions of derived functions (``jvp(grad(f))``) show each transform in turn. The
stages are recorded by the real pipeline: ``DerivedFunction.ir`` runs its passes through
``observed_passes.optimize_observed``, which, while :func:`ir_stages` watches, runs them one at
a time and notes each result.
"""
from ..api.call_signatures import resolve
from ..codegen.python import generate
from .source import specialised
from ..ir.printer import format_function
from ..api.observed_passes import observing


def ir_stages(fn, /, *args, **kwargs):
    """``[(stage name, text)]``: the IR after each stage, then the generated source.

    >>> import numpy as np, adcompile
    >>> from adcompile.inspection.ir_stages import ir_stages
    >>> @adcompile.compile(backend="python")
    ... def square(x):
    ...     return x * x
    >>> [name for name, _ in ir_stages(adcompile.grad(square), 3.0)]
    ['parsed', 'grad(square): transformed', 'grad(square): dead code (round 1)',
     'grad(square): first contributions', 'lowered']
    """
    target, sig = resolve(specialised(fn, "ir"), args, "ir", kwargs)  # Module arguments: the flat function
    root = target
    while hasattr(root, "base"):
        root = root.base
    stages = [("parsed", format_function(root.primal_ir(sig)))]
    with observing(lambda name, ir_fn: stages.append((name, format_function(ir_fn)))):
        final = target.ir(sig)
    stages.append(("lowered", generate(final, origin=target.origin())))
    return stages
