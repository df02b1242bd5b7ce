"""Arrays carried around a loop keep one numba type in every iteration.

numba types a variable by unifying the types of all its assignments: an array assigned 'C'
before a loop and a transpose ('F') or a slice ('A') in it is an 'A' array. Its type inference
goes round the loop until the types settle, and in the first round the variable still has the
layout of its value before the loop. An expression of it then gets a layout a later round
changes: with ``h = x.T`` before ``for ...: h = np.tanh(h) @ W``, ``np.tanh(h)`` is 'F' in the
first round (an 'F' operand) and 'C' in the next (an 'A' one); unified, it is 'A', a layout
numba cannot allocate ("Don't know how to allocate array with layout 'A'"). A 'C' variable
whose loop transposes it (``h = h.T * 2.0``) fails the same way.

The invariant, established here and only here (``_LayoutFlow``): every array variable a loop
assigns and reads, surely assigned before it, either

- is 'C' at the loop's head in every round (what the layouts reaching the head from before the
  loop and from the end of its body give, numba's rules in ``_layout_of``: a ufunc's result is
  'C' as soon as one operand is), and so has one type; or
- enters the loop as ``rt.any_layout(v)``, a view numba types 'A': its unified type is 'A' from
  the first round on, and every expression of it has one type.

Arguments are usually 'C'-ordered, and a state updated from them (``w = w - lr * g``) is then
'C' throughout: its conversion is ``rt.any_layout(v, args_c_ordered)``, which numba compiles to
``v`` itself when the arguments it was called with are 'C' (``_Conversions``), since an 'A'
array runs elementwise loops about twice as slowly. A variable not surely assigned before the
loop is left alone (reading it there could fail); its first assignment in the loop then fixes
its first-round type, as numba does anyway.
"""
from ..ir.builder import Namer
from ..ir.clone import copy_function
from ..ir.nodes import Assign, CustomCall, For, If, Pop, Var, While, walk
from ..ir.primitives import Kind, has_kind
from ..ir.types import F8, Type
from .deferred_fallbacks import always_raises

# What the analysis knows of an array's numba layout: 'C'; never 'F' ('C' or 'A': a value popped
# from a tape, an ``rt.any_layout`` view); anything (a parameter, a transpose, a slice). What each
# primitive gives is declared with it (the kinds C_ORDERED_RESULT and LAYOUT_LIKE_FIRST).
C, NOT_F, ANY = 0, 1, 2


def with_stable_loop_layouts(fn, in_place=False):
    """``fn`` in which each array carried around a loop that may change layout enters the loop
    as ``rt.any_layout(v)`` (see the module docstring): ``fn`` itself, changed when
    ``in_place``, else a copy if anything changes."""
    if not any(isinstance(stmt, (For, While)) for stmt in walk(fn.body)):
        return fn
    if not in_place:
        if not _Conversions(fn).insert(dry_run=True):
            return fn
        fn = copy_function(fn)
    _Conversions(fn).insert(dry_run=False)  # decisions are keyed by the loops of ``fn`` itself
    return fn


def _is_array(var):
    return var.type.ndim >= 1


class _Conversions:
    """The conversions ``fn`` needs (``insert``), in place: for each loop, before it, one per
    array it carries that may change layout (``_LayoutFlow``), made with what is known of it:

    - it may change layout even when the array arguments are 'C' (their usual layout):
      ``v = rt.any_layout(v)``;
    - only when they are not: ``v = rt.any_layout(v, args_c_ordered)``, which numba compiles
      to ``v`` itself when they are, with ``args_c_ordered = rt.c_ordered_marker((x, y))`` at the
      top of the function."""

    def __init__(self, fn):
        self.fn = fn
        self.always = _LayoutFlow(fn, params_c=True).converted({})
        self.if_arguments_are_not_c = _LayoutFlow(fn, params_c=False).converted(self.always)
        self.marker = None

    def insert(self, dry_run):
        """Insert the conversions (none when ``dry_run``); whether there are any."""
        if dry_run:
            return any(self.if_arguments_are_not_c.values())
        for loop, block in _loops_with_blocks(self.fn.body):
            position = next(k for k, stmt in enumerate(block) if stmt is loop)
            convert = [var for var in self.if_arguments_are_not_c.get(id(loop), [])
                       if not _already_converted(block, position, var)]
            block[position:position] = [self._conversion(var, id(loop)) for var in convert]
        if self.marker is not None:
            self.fn.body.insert(0, Assign(self.marker, "c_ordered_marker",
                                          [p for p in self.fn.params if _is_array(p)]))
        return True

    def _conversion(self, var, loop_id):
        if any(v.name == var.name for v in self.always.get(loop_id, [])):
            return Assign(var, "any_layout", [var])
        if self.marker is None:
            namer = Namer()
            for name in [p.name for p in self.fn.params] + [w.name for s in walk(self.fn.body) for w in s.writes()]:
                namer.reserve(name)
            self.marker = Var(namer.fresh("args_c_ordered"), Type(F8.dtype, 1))
        return Assign(var, "any_layout", [var, self.marker])


def _loops_with_blocks(block):
    """(loop, the block holding it) for every ``For`` and ``While`` in ``block``, nested ones included."""
    for stmt in list(block):
        if isinstance(stmt, (For, While)):
            yield stmt, block
        for inner in stmt.blocks():
            yield from _loops_with_blocks(inner)


class _LayoutFlow:
    """What is known of each array variable's numba layout (C, NOT_F or ANY) at each point of
    ``fn``, in program order, as numba's type inference sees it: an assignment gives its
    target what ``_layout_of`` says; after an ``if``, a variable has the join of its layouts in
    the branches; at a loop's head, the join of its layout before the loop and at the end of the
    body, found by going round until nothing changes (the least solution above the layouts
    before the loop: ``h = h * 2.0`` after ``h = np.zeros(n)`` stays 'C').

    ``converted(forced)``: for each loop (by id), the arrays it assigns and reads, surely
    assigned before it, that are not 'C' at its head -- they enter it as ``rt.any_layout(v)``,
    which makes them NOT_F at the head -- plus the ``forced`` ones."""

    def __init__(self, fn, params_c):
        self.fn, self.params_c = fn, params_c

    def converted(self, forced):
        self.forced = {loop: {v.name for v in variables} for loop, variables in forced.items()}
        self.decisions, self.seen = {}, {}
        env = {p.name: C if self.params_c else ANY for p in self.fn.params if _is_array(p)}
        self._block(self.fn.body, env, {p.name for p in self.fn.params})
        return self.decisions

    def _block(self, block, env, bound):
        """Go through ``block`` from ``env`` (name -> layout, changed in place) with the names in
        ``bound`` surely assigned (also changed in place)."""
        for stmt in block:
            if isinstance(stmt, (For, While)):
                self._loop(stmt, env, bound)
            elif isinstance(stmt, If):
                branches = [(dict(env), set(bound)), (dict(env), set(bound))]
                for inner, (branch_env, branch_bound) in zip(stmt.blocks(), branches):
                    self._block(inner, branch_env, branch_bound)
                # a branch that always raises (a deferred fallback) reaches nothing after the If
                going_on = [branch for inner, branch in zip(stmt.blocks(), branches) if not always_raises(inner)]
                going_on = going_on or branches
                _join_into(env, going_on[0][0], going_on[-1][0])
                bound |= going_on[0][1] & going_on[-1][1]
            elif isinstance(stmt, CustomCall):
                self._block(stmt.forward, env, bound)
            elif isinstance(stmt, (Assign, Pop)):
                if _is_array(stmt.target):
                    env[stmt.target.name] = _layout_of(stmt, env)
                bound.add(stmt.target.name)

    def _loop(self, loop, env, bound):
        """Go through ``loop`` (as ``_block`` does); an inner loop is gone through once per
        round of each loop around it, so a loop met again with the same layouts reuses what it
        gave (its decisions and those of the loops in it)."""
        key = (id(loop), tuple(sorted(env.items())), frozenset(bound))
        known = self.seen.get(key)
        if known is None:
            around, self.decisions = self.decisions, {}
            head = self._go_round(loop, env, bound)
            known = self.seen[key] = (head, self.decisions)
            self.decisions = around
        head, decisions = known
        self.decisions.update(decisions)
        env.clear()
        env.update(head)  # the loop may run no iteration, or any number of them

    def _go_round(self, loop, env, bound):
        """The layouts at ``loop``'s head; records its decision (and its inner loops')."""
        carried = _carried_arrays(loop, bound)
        converted = {name for name in self.forced.get(id(loop), ())}
        while True:
            head = dict(env)
            head.update((name, NOT_F) for name in converted)
            while True:  # round the loop until the head's layouts settle
                end = dict(head)
                for inner in loop.blocks():
                    self._block(inner, end, set(bound))
                joined = dict(head)
                _join_into(joined, head, end)
                if joined == head:
                    break
                head = joined
            more = {var.name for var in carried if head.get(var.name, ANY) != C} - converted
            if not more:
                break
            converted |= more
        self.decisions[id(loop)] = [var for var in carried if var.name in converted]
        return head


def _join_into(env, first, second):
    """``env`` := for each name in either, the join of its layouts in ``first`` and ``second``."""
    for name in set(first) | set(second):
        env[name] = max(first.get(name, C), second.get(name, C))


def _carried_arrays(loop, bound):
    """The array variables ``loop`` assigns and reads that are surely assigned before it, in
    the order of their first assignment in it."""
    assigned, read = {}, set()
    for stmt in walk([loop]):
        if isinstance(stmt, (Assign, Pop)) and _is_array(stmt.target):
            assigned.setdefault(stmt.target.name, stmt.target)
        read.update(atom.name for atom in stmt.reads() if isinstance(atom, Var))
    return [var for name, var in assigned.items() if name in read and name in bound]


def _already_converted(block, index, var):
    """Whether the statements just before ``block[index]`` already convert ``var``."""
    while index > 0 and isinstance(block[index - 1], Assign) and block[index - 1].prim == "any_layout":
        index -= 1
        if block[index].target.name == var.name:
            return True
    return False


def _layout_of(stmt, layouts):
    """What ``stmt`` assigns (C, NOT_F or ANY) when its operands have ``layouts``."""
    if isinstance(stmt, Pop):
        return NOT_F  # tapes hold arrays typed 'A' (runtime/kernels/bookkeeping_numba.py)
    if has_kind(stmt.prim, Kind.C_ORDERED_RESULT):
        return C
    if stmt.prim == "any_layout":
        return NOT_F
    operands = [layouts.get(a.name, ANY) for a in stmt.args if isinstance(a, Var) and _is_array(a)]
    first = layouts.get(stmt.args[0].name, ANY) if stmt.args and isinstance(stmt.args[0], Var) else ANY
    if has_kind(stmt.prim, Kind.LAYOUT_LIKE_FIRST):
        return C if first in (C, NOT_F) else ANY
    if stmt.prim == "alias":
        return first
    if has_kind(stmt.prim, Kind.ELEMENTWISE):  # numba: 'F' only when no operand is 'C' and one is 'F'
        return C if not operands or C in operands or max(operands) == NOT_F else ANY
    return ANY
