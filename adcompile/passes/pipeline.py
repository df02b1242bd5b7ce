"""The simplification pipeline run on every derived function: simplify, static shapes, CSE,
DCE and the scalar replacement of small vectors to a fixpoint, then the assignment of first
contributions, which wants the code the others leave (a contribution still behind an
``alias`` would be copied), a copy and the addition right after it as one sum, and the
others once more."""
from .copy_then_add import fold_copies_then_adds
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .first_contribution import assign_first_contributions
from .simplify import simplify
from .small_vectors import replace_small_vectors
from .static_shapes import use_static_shapes


# The passes in their order: the clean-up passes to a fixpoint, then first contributions and
# copies then adds, then the clean-up passes again (observed_passes.py runs the same tuples).
CLEAN_UP = (("simplify", simplify), ("static shapes", use_static_shapes),
            ("common subexpressions", eliminate_common_subexpressions), ("dead code", eliminate_dead_code),
            ("small vectors", replace_small_vectors))
FINAL = (("first contributions", assign_first_contributions), ("copies then adds", fold_copies_then_adds))


def _clean_up(fn, rounds):
    for _ in range(rounds):
        changed = False
        for _, run_pass in CLEAN_UP:
            changed |= run_pass(fn)
        if not changed:
            return


def optimize(fn, rounds=4):
    """Run the passes on ``fn`` in place until nothing changes (at most ``rounds`` times each)."""
    _clean_up(fn, rounds)
    if any([run_pass(fn) for _, run_pass in FINAL]):  # a list: every pass runs
        _clean_up(fn, rounds)
    return fn
