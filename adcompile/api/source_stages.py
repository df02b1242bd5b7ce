"""The code of a compiled or derived function at each stage of the compiler, by name.

``adcompile.source(fn, *args, stage=...)`` and ``fn.source(*args, stage=...)`` show one stage;
``adcompile.ir_stages`` lists them all, in the order the compiler goes through them:

    parsed                the frontend's typed IR of the user's function (frontend/parse.py)
    <kind>: transformed   reverse mode (transforms/reverse/) or forward mode
                          (transforms/forward.py) applied to the IR before it
    <kind>: <pass>        each simplification pass that changed something (passes/), in the
                          order the pipeline runs them
    differentiated        the Python generated from the final IR: differentiated and
                          simplified, not lowered -- what ``backend="python"`` runs, and what
                          a tiered numba function runs while numba compiles; the default
    lowered               the Python the function's backend runs: for numba, with the
                          lowering's fused loops (behind run-time length checks) and reused
                          buffers; the same text as ``differentiated`` for ``backend="python"``

Derived functions of derived functions (``jvp(grad(f))``) show each transform in turn. The IR
stages are recorded by the real pipeline: ``DerivedFunction.ir`` runs its passes through
``passes/observed_passes.optimize_observed``, which, while :func:`stage_texts` watches, runs them one
at a time and notes each result.
"""
from ..codegen.python import generate
from ..errors import CallError
from ..ir.printer import format_function
from ..passes.observed_passes import observing

DIFFERENTIATED = "differentiated"
LOWERED = "lowered"


def differentiated_source(target, sig):
    """The Python generated from ``target``'s IR for ``sig`` without the lowering: the readable
    code, which ``backend="python"`` runs (and a tiered numba function while numba compiles)."""
    fn_ir = target.specialization(sig)[0]
    return generate(fn_ir, origin=target.origin())


def ir_stage_texts(target, sig):
    """``[(stage name, IR text)]`` of ``target``'s IR for the signature ``sig``, stage by stage."""
    root = target
    while hasattr(root, "base"):
        root = root.base
    stages = [("parsed", format_function(root.primal_ir(sig)))]
    with observing(lambda name, ir_fn: stages.append((name, format_function(ir_fn)))):
        target.ir(sig)
    return stages


def stage_texts(target, sig):
    """``[(stage name, text)]``: the IR after each stage, then the differentiated and the
    lowered source."""
    return ir_stage_texts(target, sig) + [(DIFFERENTIATED, differentiated_source(target, sig)),
                                          (LOWERED, target.specialization(sig)[1])]


def source_at_stage(target, sig, stage):
    """The text of ``target``'s code for ``sig`` at ``stage`` (a name of :func:`stage_texts`)."""
    if stage == DIFFERENTIATED:
        return differentiated_source(target, sig)
    if stage == LOWERED:
        return target.specialization(sig)[1]
    stages = ir_stage_texts(target, sig) if isinstance(stage, str) else []
    for name, text in stages:
        if name == stage:
            return text
    raise UnknownStageError(target, stage, [name for name, _ in stages or ir_stage_texts(target, sig)]
                            + [DIFFERENTIATED, LOWERED])


class UnknownStageError(CallError):
    """A ``stage`` that is none of the function's stages; ``known`` lists them."""

    def __init__(self, target, stage, known):
        self.stage, self.known = stage, known
        self.stages_text = (f"the stages of {target.name}, in the compiler's order, are: "
                            f"{', '.join(map(repr, known))} (default {DIFFERENTIATED!r}: the readable "
                            f"generated code; {LOWERED!r}: what the {target.backend} backend runs)")
        super().__init__(f"adcompile.source({target.name}): unknown stage {stage!r}; {self.stages_text}")
