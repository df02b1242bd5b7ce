"""The simplification pipeline run on every derived function: simplify, static shapes, CSE, DCE
to a fixpoint."""
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .simplify import simplify
from .static_shapes import use_static_shapes


def optimize(fn, rounds=4):
    """Run the passes on ``fn`` in place until nothing changes (at most ``rounds`` times)."""
    for _ in range(rounds):
        changed = simplify(fn)
        changed |= use_static_shapes(fn)
        changed |= eliminate_common_subexpressions(fn)
        changed |= eliminate_dead_code(fn)
        if not changed:
            break
    return fn
