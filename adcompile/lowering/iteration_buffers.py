"""An array made in every iteration of a loop reuses the previous iteration's memory.

Reverse mode gives each array of a loop body an adjoint, made at the start of each backward
iteration: ``bq = np.zeros_like(q)``. For the small arrays of a per-observation loop (3-vectors
of a rotation) the allocation and its release cost more than the arithmetic on them. When the
array made in one iteration is dead by the time the next iteration makes its own, the loop
keeps one:

    bq = np.empty((0,), dtype=np.float64)     # before the (outermost) loop: an empty array of bq's type
    for i in range(n):
        if bq.shape[0] != q.shape[0]:          # was: bq = np.zeros_like(q)
            bq = np.zeros((q.shape[0],), dtype=np.float64)
        else:
            bq[:] = 0.0

so lengths that change between iterations stay right. The empty array is made before the
outermost loop around the statement, once per call: memory never passes from one call to the
next, and ``bq`` is given no other value while the loops run (an empty array at each entry of
an inner loop would replace, after a run of no iterations, the array of the run before). The
buffer a fused loop writes every element of (``r = np.empty((n,))`` before ``for i in range(n): r[i] = ...``)
is kept the same way, without the fill: ``if r.shape[0] != n: r = np.empty((n,))``, and so is a
vector of scalars (``cross = np.array([a, b, c])``), then written element by element. Such a
buffer is made in the taken branch of the loop's run-time check, whose other branch raises
(``deferred_fallbacks.py``): where control passes the check, the branch runs, so its
statements count as statements of the loop's body at that place (``_once_per_iteration``). (numba compiles the
element writes to a few stores; an array returned by a helper instead, ``bq = f(bq, q)``, costs
reference counting in every iteration, about as much as the allocation saved.) The new array is
'C'-ordered, as the one before the loop, whatever ``q``'s layout, so ``bq`` keeps one numba type.

The invariant that makes it legal, checked here only (``_reusable``): nothing reads an
iteration's array, or any array that may be its memory (views of it, ``rt.unbroadcast(bq, x)``,
as ``ir/memory.memory_roots`` says), after the next iteration's statement has zeroed it. It
holds when

- ``bq`` is a plain array variable given its value by that one statement in the whole function
  (so every value it holds is one iteration's; in-place updates ``bq += g`` after it in the body
  are reads of it), which is a statement of the loop's body itself, or of the taken branch of a
  check whose other branch raises (it runs once per iteration), and it is not a result of the
  function;
- ``bq`` and every other variable that may be its memory are read only in the loop's body, in
  statements after the one giving them their value in the same iteration: each such variable
  (other than ``bq``) is given its value by one plain assignment, a statement of the body after
  ``bq``'s; a read before that (a value carried from an earlier iteration) or after the loop
  (the last iteration's or an earlier one's) disqualifies it;
- the memory is never kept by anything else: no tape push, custom Function call or other
  statement than an assignment, an element write or a loop or branch reads any of them (an
  element write ``bx[i] += bq`` copies the values; a loop or branch reads its condition and
  bounds, scalars).

Two relaxations keep the same invariant:

- with the array's one statement, reads of ``bq`` itself (not of other names for its memory)
  may be anywhere, by statements that keep no memory: after the loop (reverse mode reads the
  last forward iteration's array for its shape), or before the statement in the next
  iteration. ``bq`` always names the array the statement made last, and the reused memory
  holds what that array held: only other names could see an older iteration's array, and the
  rules above keep them within their iteration;
- an array the backward loop recomputes (``axis = rotation / theta`` in the forward loop and
  again in the backward one) has one such statement in each loop: when every plain assignment
  of ``bq`` is one of these, no other name shares its memory, and every read of ``bq`` follows
  one of them in the same iteration, the loops keep an array (an empty one before each loop
  nest, read by nothing: no read reaches from one loop to another).

Then, when the statement runs again, every name for the previous array is dead: its reads all
came before, in the previous iteration. Element writes into the array (``bq[0] += g``) need no
condition: the next iteration zeroes the array anyway, and a fused loop's buffer is written at
every point by its loop before anything reads it (``loops.py`` allocates one only for that; the
contents of a user's own ``np.empty`` are unspecified until written).
"""
from ..ir.builder import namer_for
from ..ir.indexing import FULL_SLICE
from ..ir.memory import memory_roots
from ..ir.nodes import AccumItem, Assign, For, If, SetItem, Var, While, const, walk
from ..ir.primitives import Kind, primitive
from ..ir.types import BOOL, FLOAT32, FLOAT64, INT64, Type
from .deferred_fallbacks import always_raises
from .zeroed_buffers import zeroing_nest

# statements that may read the array or its views without keeping its memory
_READS_WITHOUT_KEEPING = (Assign, SetItem, AccumItem, If, For, While)


def reuse_across_iterations(fn):
    """Rewrite, in place, each ``zeros_like`` or fused loop's ``empty`` of a loop body whose
    previous iteration's array is dead (see the module docstring) to reuse it; the number
    rewritten."""
    candidates = _reusable(fn)
    namer = namer_for(fn)
    for candidate in candidates:
        candidate.rewrite(namer)
    return len(candidates)


def would_reuse(fn):
    """Whether ``reuse_across_iterations`` would rewrite anything in ``fn``."""
    return bool(_reusable(fn))


def _reusable(fn):
    """The candidates whose previous iteration's array is dead, the one place that decides it:
    a variable's candidates are taken together (all of them or none)."""
    by_target = {}
    for candidate in _candidates(fn.body):
        by_target.setdefault(candidate.stmt.target, []).append(candidate)
    if not by_target:
        return []
    roots = memory_roots(fn.body, fn.params)
    reusable = []
    for target, candidates in by_target.items():
        if any(target is result for result in fn.results) or target in fn.params:
            continue
        sharers = {var for var, its in roots.items() if target in its and var is not target}
        if len(candidates) == 1:
            ok = candidates[0].reusable(fn, sharers)
            if ok and candidates[0].makes_zeros:
                candidate = candidates[0]
                candidate.zeroing = zeroing_nest(fn, candidate.pairs, candidate.index, target, sharers)
        else:
            ok = _recomputed_in_each_loop(fn, target, candidates, sharers)
        if ok:
            reusable.extend(candidates)
    return reusable


def _recomputed_in_each_loop(fn, target, candidates, sharers):
    """Whether ``target``'s candidates, in different loops, are all its plain assignments, no
    other name shares its memory, and each read of it (in-place updates included) follows one of
    them in the same iteration, by a statement that keeps no memory."""
    loops = {id(c.loop) for c in candidates}
    if sharers or len(loops) != len(candidates):
        return False
    made = {id(c.stmt) for c in candidates}
    later = set()
    for c in candidates:
        later |= {id(s) for s in walk(c.sequence[c.index + 1:])}
    for s in walk(fn.body):
        if id(s) in made:
            continue
        if target in s.writes() and not isinstance(s, SetItem) and not (isinstance(s, Assign) and s.inplace):
            return False  # another plain assignment
        if (target in s.reads() or target in s.writes()) and (
                id(s) not in later or not isinstance(s, _READS_WITHOUT_KEEPING)):
            return False
    return True


def _is_zeros_like(stmt):
    """A new array of zeros shaped like the statement's one argument."""
    if (not isinstance(stmt, Assign) or stmt.inplace or len(stmt.args) != 1 or stmt.target.type.ndim == 0
            or stmt.target.type.dtype not in (FLOAT64, FLOAT32)):
        return False
    p = primitive(stmt.prim)
    return p.fill == 0 and p.shape_of == 0 and p.has(Kind.FRESH)


def _is_loop_buffer(stmt):
    """A new float array of lengths given as integers (``np.empty((n,))``), as a fused loop
    allocates for a value it writes at every point."""
    return (isinstance(stmt, Assign) and not stmt.inplace and stmt.prim == "empty" and stmt.target.type.ndim > 0
            and stmt.target.type.dtype in (FLOAT64, FLOAT32) and len(stmt.args) == stmt.target.type.ndim)


def _is_vector_of_scalars(stmt):
    """A new float vector of scalars (``np.array([a, b, c])``): kept as a buffer, it is written
    at every point by the element writes replacing it."""
    return (isinstance(stmt, Assign) and not stmt.inplace and stmt.prim == "vector"
            and stmt.target.type.dtype in (FLOAT64, FLOAT32) and len(stmt.args) > 0)


def _once_per_iteration(body):
    """The statements of a loop's ``body`` that run once in each iteration, in order, each with
    the block holding it: the body's own, and for a check whose other branch raises, those of
    its taken branch in the check's place (an iteration that raises ends the call)."""
    sequence = []
    for stmt in body:
        if isinstance(stmt, If) and always_raises(stmt.orelse) and not always_raises(stmt.body):
            sequence.extend(_once_per_iteration(stmt.body))
        else:
            sequence.append((stmt, body))
    return sequence


def _candidates(block, outermost=None):
    """A ``_Candidate`` for each ``zeros_like`` or fused loop's buffer run once in each iteration
    of a loop in ``block``; ``outermost``: (the block holding it, the outermost loop around
    ``block``), if any."""
    for stmt in block:
        is_loop = isinstance(stmt, (For, While))
        # (a parallel loop's iterations run at once: each needs its own array)
        if is_loop and not getattr(stmt, "parallel", False):
            sequence = _once_per_iteration(stmt.body)
            for index, (inner, holder) in enumerate(sequence):
                if _is_zeros_like(inner) or _is_loop_buffer(inner) or _is_vector_of_scalars(inner):
                    yield _Candidate(stmt, sequence, index, holder, outermost or (block, stmt))
        for inner_block in stmt.blocks():
            yield from _candidates(inner_block, outermost or ((block, stmt) if is_loop else None))


class _Candidate:
    """``sequence[index]``, ``b = zeros_like(x)`` or ``b = empty(n)``, a statement run once per
    iteration of ``loop`` (``_once_per_iteration``: ``sequence``), held by the list ``holder``;
    ``outermost``: (the block holding the outermost loop around it, that loop)."""

    def __init__(self, loop, sequence, index, holder, outermost):
        self.loop, self.index, self.holder = loop, index, holder
        self.entry_block, self.outermost_loop = outermost  # where the empty array goes: once per call
        self.pairs = sequence
        self.sequence = [stmt for stmt, _ in sequence]
        self.stmt = self.sequence[index]
        self.makes_zeros = self.stmt.prim not in ("empty", "vector")
        self.zeroing = None  # a loop nest leaving the array all zero (``zeroed_buffers.py``), if any

    def reusable(self, fn, sharers):
        """Whether no read of an iteration's array can follow the next iteration's zeroing, the
        target being made by this statement only and ``sharers`` the other names of its memory."""
        target = self.stmt.target
        if any(var in fn.params or any(var is result for result in fn.results) for var in sharers):
            return False
        assigned_at = {}
        for var in sharers:
            at = self._defining_assignment(fn, var)
            if at is None or at <= self.index:
                return False
            assigned_at[var] = at
        if self._defining_assignment(fn, target) != self.index:
            return False
        own_reads_ok = all(isinstance(s, _READS_WITHOUT_KEEPING) for s in walk(fn.body) if target in s.reads())
        return own_reads_ok and all(self._read_only_after(fn, var, at) for var, at in assigned_at.items())

    def _defining_assignment(self, fn, var):
        """The index in the loop's body of the one plain assignment giving ``var`` its value,
        else None. In-place updates of it after that (``bq += g``) are reads of the value: they
        keep it in the iteration that made it."""
        bindings = [s for s in walk(fn.body) if not isinstance(s, SetItem) and var in s.writes()]
        plain = [s for s in bindings if not (isinstance(s, Assign) and s.inplace)]
        if len(plain) != 1 or not isinstance(plain[0], Assign):
            return None
        at = next((k for k, s in enumerate(self.sequence) if s is plain[0]), None)
        later = {id(s) for s in walk(self.sequence[at + 1:])} if at is not None else set()
        return at if all(s is plain[0] or id(s) in later for s in bindings) else None

    def _read_only_after(self, fn, var, at):
        """Whether every read of ``var`` in ``fn`` is in a statement run once per iteration of
        the loop after ``sequence[at]`` (or nested in one), by a statement that keeps no memory."""
        later = {id(s) for s in walk(self.sequence[at + 1:])}
        for s in walk(fn.body):
            if var in s.reads() and (id(s) not in later or not isinstance(s, _READS_WITHOUT_KEEPING)):
                return False
        return True

    def rewrite(self, namer):
        """Before the loop, an empty array of the target's type; in the body, zeros in it (a
        new array when the lengths differ) instead of the ``zeros_like``, or the array kept
        (a new one when the lengths differ) instead of the ``empty``."""
        target, loc = self.stmt.target, self.stmt.loc
        ndim, dtype = target.type.ndim, target.type.dtype
        zeros = self.makes_zeros
        elements = self.stmt.args if self.stmt.prim == "vector" else ()
        check, lengths, differs = [], [], None
        for axis in range(ndim):
            have, want = (Var(namer.fresh(base), Type(INT64, 0), is_temp=True) for base in ("_have", "_want"))
            if zeros:
                wanted = Assign(want, "dim", [self.stmt.args[0]], {"axis": axis}, loc)
            else:
                length = const(len(elements)) if elements else self.stmt.args[axis]
                wanted = Assign(want, "alias", [length], loc=loc)
            check += [Assign(have, "dim", [target], {"axis": axis}, loc), wanted]
            lengths.append(want)
            differ = Var(namer.fresh("_differs"), Type(BOOL, 0), is_temp=True)
            check.append(Assign(differ, "ne", [have, want], loc=loc))
            if differs is not None:
                either = Var(namer.fresh("_differs"), Type(BOOL, 0), is_temp=True)
                check.append(Assign(either, "or", [differs, differ], loc=loc))
                differ = either
            differs = differ
        before_loop = []
        if zeros:
            allocate = Assign(target, "zeros", lengths, {"ndim": ndim, "dtype": dtype}, loc)
            kept = [SetItem(target, const(0.0), [FULL_SLICE] * ndim, loc)]
            if self.zeroing is not None:  # filled only where the last zeroing loops did not cover it
                zeroed = Var(namer.fresh("_zeroed"), Type(BOOL, 0))
                not_zeroed = Var(namer.fresh("_not_zeroed"), Type(BOOL, 0), is_temp=True)
                kept = [Assign(not_zeroed, "not", [zeroed], loc=loc), If(not_zeroed, kept, [], loc)]
                before_loop.append(Assign(zeroed, "alias", [const(False)], loc=loc))
                self.zeroing.insert_coverage_checks(zeroed, namer)
        else:
            allocate = Assign(target, "empty", lengths, {"ndim": ndim, "dtype": dtype}, loc)
            kept = []
        writes = [SetItem(target, element, [("int", const(k))], loc) for k, element in enumerate(elements)]
        at = next(k for k, stmt in enumerate(self.holder) if stmt is self.stmt)  # earlier rewrites moved it
        self.holder[at:at + 1] = check + [If(differs, [allocate], kept, loc)] + writes
        empty = Assign(target, "empty", [const(0)] * ndim, {"ndim": ndim, "dtype": dtype}, loc)
        at = next(k for k, stmt in enumerate(self.entry_block) if stmt is self.outermost_loop)
        self.entry_block[at:at] = [empty] + before_loop
