"""The simplification pipeline run on every derived function: simplify, static shapes, CSE and
DCE to a fixpoint, then the assignment of first contributions, which wants the code the others
leave (a contribution still behind an ``alias`` would be copied), a copy and the addition
right after it as one sum, and the others once more."""
from .copy_then_add import fold_copies_then_adds
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .first_contribution import assign_first_contributions
from .simplify import simplify
from .static_shapes import use_static_shapes


def _clean_up(fn, rounds):
    for _ in range(rounds):
        changed = simplify(fn)
        changed |= use_static_shapes(fn)
        changed |= eliminate_common_subexpressions(fn)
        changed |= eliminate_dead_code(fn)
        if not changed:
            return


def optimize(fn, rounds=4):
    """Run the passes on ``fn`` in place until nothing changes (at most ``rounds`` times each)."""
    _clean_up(fn, rounds)
    if assign_first_contributions(fn) | fold_copies_then_adds(fn):
        _clean_up(fn, rounds)
    return fn
