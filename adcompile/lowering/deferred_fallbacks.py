"""A fused loop's unfused fallback, left out of the compiled code and run only when a call needs it.

Each loop the lowering writes runs behind a run-time check of what it assumes (dims equal,
nothing broadcast along them, reductions not empty), with the statements it replaces in the
``else`` branch (an ``If`` marked ``unfused_fallback``). The check almost always passes, yet numba
would type and compile both branches: the unfused copy costs a fifth of the compile of a
fused gradient (the log-domain Sinkhorn: 18.5 s cold with it, 14.7 s without).

So where it is legal, the ``else`` branches become ``raise rt.UnfusedCodeNeeded(...)`` (a
statement, not a call that raises: numba must see the branch end, or a variable only the loop's
side assigns is undefined on the other and a loop around it cannot be typed); the caller (``backend/unfused_fallback.py``) then runs the same call with
the function's unfused code (the IR before the lowering, compiled at that first need), which
computes the same result.

The invariant that makes it legal, checked here and only here: **the abandoned run has no effect
the caller can see.** Generated code has two kinds of effect: writing into memory that an
argument may view, and pushing onto or popping from a tape it was given (it does no I/O and has
no random state; other tapes and temporaries are its own).
So a function defers its fallbacks only if no statement of it (custom Function regions
included) writes into an array whose memory may be an argument's (``ir/memory.py``) or pushes
onto or pops from a tape passed to it (the backward half of a ``vjp``). An
optimizer step or a training epoch, which update parameters in place, keeps its ``else``
branches inline.
"""
from ..ir.memory import memory_roots
from ..ir.nodes import Assign, Comment, If, Pop, Push, SetItem, Var, walk
from ..ir.primitives import Kind, has_kind
from ..ir.types import Type


def always_raises(block):
    """Whether running ``block`` always ends in a raise (a deferred fallback's ``else``): control
    never leaves it, so what it assigns never reaches the statements after its ``If``."""
    rest = [s for s in block if not isinstance(s, Comment)]
    return bool(rest) and isinstance(rest[-1], Assign) and has_kind(rest[-1].prim, Kind.RAISES)


def writes_no_argument(fn):
    """Whether no statement of ``fn`` writes into memory one of its parameters may view, nor
    pushes onto or pops from a tape it was given (the backward half of a ``vjp`` pops the
    forward half's tapes: a run stopped midway would leave them short)."""
    written, uses_given_tapes = argument_effects(fn)
    return not written and not uses_given_tapes


def argument_effects(fn):
    """``(written, uses_given_tapes)``: the positions of the parameters of ``fn`` into whose
    memory a statement may write (through the parameter or any view of it, ``ir/memory.py``),
    and whether it pushes onto or pops from a tape it was given."""
    roots = memory_roots(fn.body, fn.params)
    names = {p.name for p in fn.params}
    written, uses_given_tapes = set(), False
    for stmt in walk(fn.body):
        if isinstance(stmt, SetItem):
            written |= roots.get(stmt.array, {stmt.array})
        elif isinstance(stmt, (Push, Pop)) and stmt.tape.name in names:
            uses_given_tapes = True
    return tuple(k for k, param in enumerate(fn.params) if param in written), uses_given_tapes


def defer_unfused_fallbacks(fn):
    """Replace, in place, the ``else`` branch of each fallback ``If`` of the lowered ``fn`` by a
    call raising ``UnfusedCodeNeeded``, if the invariant above holds; whether it did."""
    fallbacks = [stmt for stmt in walk(fn.body) if isinstance(stmt, If) and stmt.unfused_fallback]
    if not fallbacks or not writes_no_argument(fn):
        return False
    for stmt in fallbacks:
        raised = Var("_unfused", Type("b1"), is_temp=True)
        stmt.orelse = [Comment("shapes the loop does not handle: the call reruns with the unfused code"),
                       Assign(raised, "unfused_code_needed", [])]
    return True
