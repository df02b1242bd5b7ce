"""The schedule of a checkpointed loop's backward sweep, counted in Python (for reports and tests).

The generated code (``transforms/reverse/checkpointing.py``) reverses ``n`` iterations from
``s`` snapshots; ``recomputed_iterations`` replays its control flow without the iterations and
counts those it runs untaped (each reversed iteration is also run once taped, not counted).
``revolve_minimum`` is Griewank and Walther's least count for the same ``n`` and ``s``:
``r n - C(s + r, r - 1)``, ``r`` the least with ``C(s + r, s) >= n``.
"""
from math import comb

from .kernels.bookkeeping import revolve_advance


def recomputed_iterations(n, snapshots):
    """The iterations the backward sweep of a checkpointed loop of ``n`` iterations runs
    untaped with ``snapshots`` snapshots (the first holds the state on entry)."""
    count, stack, hi = 0, [0], n
    while hi > 0:
        lo = stack[-1]
        while hi - lo > 1:
            if len(stack) < snapshots:
                mid = lo + revolve_advance(hi - lo, snapshots - len(stack) + 1)
                stack.append(mid)
            else:
                mid = hi - 1
            count, lo = count + mid - lo, mid
        hi = lo
        if len(stack) > 1 and stack[-1] == hi:
            stack.pop()
    return count


def repetitions(n, snapshots):
    """The least ``r`` with ``C(snapshots + r, snapshots) >= n``."""
    r = 0
    while comb(snapshots + r, snapshots) < n:
        r += 1
    return r


def revolve_minimum(n, snapshots):
    """The least number of untaped iterations that reverses ``n`` with ``snapshots`` snapshots."""
    r = repetitions(n, snapshots)
    return r * n - comb(snapshots + r, r - 1) if r > 0 else 0
