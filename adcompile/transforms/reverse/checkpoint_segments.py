"""The pieces of a checkpointed loop's reverse mode: its state, and its segments as IR functions.

A checkpointed loop's region (``frontend/checkpointed.py``) has the carried state as its first
``n_state`` inputs and as its outputs; its other inputs are the values the body only reads.
A *segment* is the loop run from iteration ``lo`` to iteration ``hi`` (counted from 0):

    def segment(x, v, k, lo, hi):              # the state, the other inputs, the bounds
        for t in range(start + lo * step, start + hi * step, step):
            <the loop body>
        return x, v

The schedule (``checkpointing.py``) inlines ``segment`` to advance the state without taping,
and the vjp of ``segment`` (reverse mode of it, taping that segment only) to reverse a step.
"""
from ...errors import UnsupportedSyntaxError, located
from ...frontend.checkpointed import CheckpointedLoopInfo
from ...ir.builder import Builder, Namer
from ...ir.clone import Renamer, clone_block
from ...ir.nodes import For, Function, Var, walk
from ...ir.types import I8


def is_checkpointed(stmt):
    return isinstance(getattr(stmt, "info", None), CheckpointedLoopInfo)


class CheckpointedLoop:
    """A checkpointed loop's region seen by reverse mode: its loop, state and other inputs,
    and which of them carry derivatives."""

    def __init__(self, transform, stmt):
        info = stmt.info
        self.stmt = stmt
        self.loop = next(s for s in stmt.forward if isinstance(s, For))
        self.state = list(stmt.outputs)
        others = stmt.inputs[info.n_state:]
        self.others = [a for a in (others[:-1] if info.has_snapshots else others) if isinstance(a, Var)]
        self.snapshots = info.snapshots
        active = transform.active
        self.active_state = [v for v in self.state if v.type.is_float and v in active]
        self.active_others = [v for v in self.others if v.type.is_float and v in active]

    @property
    def has_reverse(self):
        return bool(self.active_state or self.active_others)

    def check_no_local_read_after(self, transform):
        """A variable first assigned in the body and read after the loop holds the last
        iteration's value, which the schedule does not differentiate: rejected."""
        inside = {id(s) for s in walk(self.stmt.forward)}
        for stmt in walk(self.loop.body):
            for var in stmt.writes():
                if var in self.state or var not in transform.active:
                    continue
                info = transform.scopes.info.get(var)
                reads = info.reads if info is not None else []
                if any(where is not None and id(where) not in inside for where, _ in reads):
                    raise located(UnsupportedSyntaxError,
                                  f"'{var.name}' is first assigned inside a checkpointed loop and read after it: "
                                  f"assign it before the loop so that it is part of the loop's state", self.loop.loc)

    def segment(self, name, results, source_file):
        """The IR function ``segment(*state, *others, lo, hi) -> results`` (a subset of the state)."""
        namer = Namer()
        rename = Renamer(namer)
        params = [rename(v) for v in self.state + self.others]
        lo, hi = Var(namer.fresh("lo"), I8), Var(namer.fresh("hi"), I8)
        body = []
        b = Builder(namer, body, self.loop.loc)
        loop = self.loop
        start, step = rename(loop.start), rename(loop.step)
        first = b.add(start, b.mul(lo, step))
        last = b.add(start, b.mul(hi, step))
        body.append(For(rename(loop.index), first, last, step, clone_block(loop.body, rename), loop.loc))
        return Function(name, params + [lo, hi], body, [rename(v) for v in results], True, source_file)

    def segment_vjp(self, transform_class, source_file):
        """The vjp of one segment: ``(*state, *others, lo, hi, *cotangents of the active state)
        -> (*active state at hi, *cotangents of the active state and other inputs at lo)``."""
        fn = self.segment("checkpointed_segment", self.active_state, source_file)
        wrt = [k for k, v in enumerate(self.state + self.others) if v in self.active_state or v in self.active_others]
        derived = transform_class(fn, wrt, Namer(), "vjp")
        derived.want_values = True
        return derived.run()
