"""Checkpointed loops: ``for t in adcompile.checkpointed(range(n), snapshots=s):`` -> a region.

Outside compiled code ``checkpointed`` returns its iterable unchanged. Inside, the frontend
translates the loop as usual and wraps it in a ``CustomCall`` region whose ``info`` is a
``CheckpointedLoopInfo``:

    CustomCall(outputs=[x, v],                 # the carried state: variables bound before the
               inputs=[x, v, k, n, s],         #   loop that its body writes (arrays written in
               forward=[For(t, 0, n, 1, ...)], #   place too), then every other value it reads
               info=CheckpointedLoopInfo(n_state=2, snapshots=s))

The function itself runs the loop unchanged; reverse mode (``transforms/reverse/checkpointing.py``)
keeps only the state on entry and reverses the loop by the binomial schedule, recomputing
segments from snapshots instead of taping every iteration. Loops that may ``break`` or
``return`` have no trip count known on entry: they are rejected with a located error.
"""
from ..errors import UnsupportedSyntaxError
from ..ir.nodes import Const, CustomCall, For, Var, walk
from .extensions import register_classifier
from .values import NoneValue, RangeValue


def checkpointed(iterable, snapshots=None):
    """Mark a ``for`` loop over ``range(...)`` for checkpointed reverse mode.

    Inside a compiled function, the gradient of ``for t in checkpointed(range(n), snapshots=s):``
    stores the loop's state at ``s`` snapshots at most and recomputes the iterations between
    them in the backward sweep (the binomial schedule of Griewank and Walther's revolve), so its
    memory does not grow with ``n``. ``snapshots=None`` picks the number from the size of the
    state and the trip count (see docs/checkpointing.md). Outside compiled code it returns
    ``iterable`` unchanged.

    >>> import adcompile
    >>> @adcompile.compile(backend="python")
    ... def decay(x, n):
    ...     for t in adcompile.checkpointed(range(n), snapshots=2):
    ...         x = 0.5 * x
    ...     return x
    >>> adcompile.grad(decay)(3.0, 4)
    0.0625
    """
    return iterable


class CheckpointedValue:
    """``checkpointed(range(...), snapshots)`` inside compiled code, before the loop uses it."""

    def __init__(self, iterable, snapshots):
        self.iterable, self.snapshots = iterable, snapshots


class CheckpointedFactory:
    """``adcompile.checkpointed`` as a value inside compiled code."""

    def compile_call(self, tr, args, kwargs, node):
        if not 1 <= len(args) <= 2 or set(kwargs) - {"snapshots"} or (len(args) == 2 and kwargs):
            raise tr.error("adcompile.checkpointed takes a range and snapshots=: "
                           "checkpointed(range(n), snapshots=50)", node, UnsupportedSyntaxError)
        snapshots = kwargs.get("snapshots", args[1] if len(args) == 2 else None)
        if isinstance(snapshots, NoneValue):
            snapshots = None
        if snapshots is not None and not (isinstance(snapshots, (Var, Const)) and snapshots.type.dtype == "i8"):
            raise tr.error("snapshots must be an int (or None: chosen from the state size and the "
                           "trip count)", node, UnsupportedSyntaxError)
        return CheckpointedValue(args[0], snapshots)


class CheckpointedLoopInfo:
    """The ``info`` of a checkpointed loop's region: the first ``n_state`` inputs are its
    carried state (also its outputs); ``snapshots`` is an int atom or None."""

    def __init__(self, n_state, snapshots, has_snapshots):
        self.n_state = n_state
        self.snapshots = snapshots
        self.has_snapshots = has_snapshots  # whether inputs[-1] is the snapshots count

    def __str__(self):
        return "checkpointed loop"

    def describe(self):
        return "checkpointed loop (reverse mode recomputes it from snapshots)"

    def reverse_rule(self, ctx, stmt, b):
        raise AssertionError("reverse mode handles checkpointed loops itself (transforms/reverse/checkpointing.py)")


def checkpointed_for(tr, node, value, translate_loop):
    """Translate ``for ... in checkpointed(range(...)):`` (``translate_loop(node, iterable)``
    emits the plain loop) and wrap the loop in its region."""
    if getattr(node, "stop_flags", None):
        raise tr.error("a checkpointed loop cannot break or return: its trip count must be known "
                       "when it starts (checkpointed(range(n)) runs all n iterations); move the exit "
                       "test out of the loop or drop checkpointed", node, UnsupportedSyntaxError)
    if not isinstance(value.iterable, RangeValue):
        raise tr.error("adcompile.checkpointed supports a range only: "
                       "for t in adcompile.checkpointed(range(n)):", node.iter, UnsupportedSyntaxError)
    bound_before = {v for v in tr.env.values() if isinstance(v, Var)}
    before = len(tr.block)
    translate_loop(node, value.iterable)
    loop = tr.block[-1]
    assert isinstance(loop, For) and len(tr.block) > before
    state, inputs = loop_state(loop, bound_before)
    snapshots = value.snapshots
    if isinstance(snapshots, Var):
        inputs.append(snapshots)
    tr.block[-1] = CustomCall(state, state + inputs, [loop],
                              CheckpointedLoopInfo(len(state), snapshots, isinstance(snapshots, Var)), loop.loc)


def loop_state(loop, bound_before):
    """(state, other inputs) of ``loop``: the variables bound before it that its body writes,
    then the other variables it reads (range bounds included), each in order of first use."""
    written, read = [], []
    for stmt in walk(loop.body):
        for var in stmt.writes():
            if var not in written:
                written.append(var)
        for atom in stmt.reads():
            if isinstance(atom, Var) and atom not in read:
                read.append(atom)
    for atom in (loop.start, loop.stop, loop.step):
        if isinstance(atom, Var) and atom not in read:
            read.append(atom)
    state = [v for v in written if v in bound_before and v is not loop.index and v.type.dtype != "none"]
    inputs = [v for v in read if v not in written and v is not loop.index and v.type.dtype != "none"]
    return state, inputs


@register_classifier
def _classify(value):
    if value is checkpointed:
        return CheckpointedFactory()
    return None
