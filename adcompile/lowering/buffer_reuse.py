"""Buffer reuse: an allocation after fusion takes the memory of a temporary nobody reads again.

A fused loop writes the values it materialises into ``np.empty`` buffers (``loops.py``). When
an owned array of the same shape and dtype is dead by then, the buffer is that array:

    _t_12 = qx * qx                # read for the last time above
    bqx = _t_12                    # was: bqx = np.empty((n, k, d), dtype=np.float64)
    for i in range(n): ...  bqx[i, j, k] = ...

The new value does not need the old contents (``empty`` promises none), so only the old
array's death must be proven. A donor ``d`` qualifies when:

- it is owned: one plain assignment gives it a fresh array (an elementwise result, a matrix
  product, an axis reduction, an allocation), never a parameter, a view, a returned value,
  or a value pushed on a tape; it may also be written in place
  (``d[i] = ...``) before it dies;
- it is dead over the whole loop nest (``_Uses.live_touches``, the one place this is decided):
  every read of ``d`` or of an array that may share its memory (views, as in ``ir/memory.py``,
  and any result not known to be new: ``rt.unbroadcast(d, x)`` may be ``d``) comes after that
  assignment and before the allocation in every pass through them, in the same block or in
  earlier statements of the ``if`` branches leading to the allocation (a read in the other
  branch never runs with it), and reads the value of this pass: a name for ``d``'s memory
  carried from an earlier iteration of an enclosing loop (``prev = d`` after the read of
  ``prev``) holds the memory of an earlier ``d``, and its reads are live. The allocation may
  sit in ``if`` blocks below the donor's block, never in a loop below it (nor before the
  assignment): a value made before a loop and read in every iteration (``xs`` in
  ``for c: img = img * (xs - p[c])``) is live at the allocation in every iteration but the
  last, the allocation's own loop's read of it included, and the buffer would be one array for
  every iteration. Donor and allocation in one loop body are fine: the donor is a new array in
  each iteration, and a read in the body before its assignment (of the previous iteration's
  value) disqualifies it. The one exception to "no read after the allocation": the loop
  writing the allocation may read ``d`` at each point before writing the same point of the
  new array (below), once per assignment of ``d``.
- it has the allocation's dtype and, by the static shapes (``ir/shapes.py``), its shape; its
  assignment reads no variable that has a placeholder (``zeros_like(t)`` of a ``t`` assigned
  only in a branch that did not run is empty, though the static shapes, which a placeholder
  does not enter, give ``t`` the branch's shape).

The first statement using the allocation must be the loop writing it: generated code may
evaluate an expression read once later than the IR places it (``codegen/python.py``), but
never past the start of a loop.

The same buffer may pass on: a taken buffer reads as a view of the donor, so a later
allocation may take it again once both names are dead.
"""
from ..ir.nodes import AccumItem, Assign, Comment, CustomCall, For, If, Push, SetItem, Var, walk
from ..ir.primitives import Kind, has_kind
from ..ir.shapes import infer_shapes

# Statements whose blocks run at most once each time the statement runs (a custom Function's
# region is inlined code after differentiation): an allocation below them runs at most once
# per pass through the donor's block.
_RUN_ONCE = (If, CustomCall)


def reuse_buffers(fn, shapes):
    """Give ``fn``'s ``np.empty`` allocations the memory of dead owned arrays of the same
    shape, in place (``fn`` is the lowering's own copy); the number of buffers reused.
    ``shapes``: the ``ShapeMap`` of the IR before lowering (same variables); the shapes of
    ``fn`` itself are asked too (an allocation's lengths, ``x.shape[0]``, may prove more)."""
    maps = (shapes, infer_shapes(fn))
    reused = 0
    while True:
        found = _reuse_round(fn, maps)
        if not found:
            return reused
        reused += found


def _reuse_round(fn, maps):
    """One round: every reuse that ``_Uses`` of the current ``fn`` proves, taken together; the
    number taken.

    Independence (what makes taking them together legal): a reuse ``t = d`` changes who holds
    ``d``'s memory (``t`` and ``t``'s views now do) and nothing else; every other decision of the
    round is about other owned donors, whose memory roots are only themselves, and about
    other fresh allocations. So a round never uses a variable of an earlier pair of the same
    round, as donor or as target; the next round, built on the edited ``fn``, sees ``t`` among
    ``d``'s viewers and may give ``d``'s memory on again. Edits are applied after the
    decisions, from the end of each block, so that the positions ``_Uses`` recorded hold."""
    uses = _Uses(fn)
    donors = _DonorsByType(uses.donors, maps)
    taken, edits = set(), []
    for block, index, stmt, path in uses.allocations:
        if stmt.target in taken:
            continue
        loop_index = _loop_writing(block, index, stmt.target)
        if loop_index is None:
            continue
        for donor in donors.like(stmt.target):
            if donor in taken:
                continue
            late = uses.live_touches(donor, path)
            if late is None:
                continue
            if late and not _read_point_by_point(donor, stmt.target, late, block, path, loop_index):
                continue
            if not late and uses.written_into_reader(donor):  # (a loop's read is never written into it)
                continue
            why = "which the loop below reads at each point before writing it there" if late else "which is not read again"
            note = Comment(f"{stmt.target.name} reuses the memory of {donor.name}, {why}")
            edits.append((block, index, [note, Assign(stmt.target, "alias", [donor], loc=stmt.loc)]))
            taken |= {donor, stmt.target}
            break
    for block, index, replacement in sorted(edits, key=lambda edit: -edit[1]):
        block[index:index + 1] = replacement
    return len(edits)


class _DonorsByType:
    """The donor candidates indexed by dtype, rank and shape (in each shape map where that shape
    holds for the whole call), so that an allocation finds the donors of its type by a look-up:
    comparing it with every donor made a long program's lowering quadratic. ``like(target)``
    lists them in the donors' order, as a scan keeping those with ``ShapeMap.same`` would."""

    def __init__(self, donors, maps):
        self.maps = maps
        self.order = {donor: k for k, donor in enumerate(donors)}
        self.index = {}
        for donor in donors:
            for key in self._keys(donor):
                self.index.setdefault(key, []).append(donor)

    def _keys(self, var):
        if not var.type.ndim:
            return []
        keys = []
        for m, shapes in enumerate(self.maps):
            shape = shapes.of(var)
            if shapes.same(var, var):  # one shape for the whole call
                keys.append((m, var.type.dtype, var.type.ndim, shape))
        return keys

    def like(self, target):
        found = {donor for key in self._keys(target) for donor in self.index.get(key, ())}
        return sorted(found, key=self.order.__getitem__)


class _Uses:
    """Where each array is assigned, read and written, by position, and the donor candidates.

    A position is a tuple of steps ``(block id, statement index, statement type)`` from the
    function body down to a statement."""

    def __init__(self, fn):
        self.fn = fn
        self.roots = _memory_roots(fn)
        self.touches, self.writes = {}, {}  # var -> positions reading or writing it / its writers
        self.reads = {atom: 1 for atom in fn.results if isinstance(atom, Var)}  # var -> number of reads
        self.allocations = []  # (block, index, stmt, position) of each ``empty``
        self.kept = {atom for atom in fn.results if isinstance(atom, Var)}  # outlive the call, or stored
        self.placeheld = set()  # variables given a placeholder (a type, no value) before their assignment
        self._visit(fn.body, ())
        self.viewers_of = {}  # var -> every array that may share its memory (itself included)
        for other, roots in self.roots.items():
            for root in roots:
                self.viewers_of.setdefault(root, set()).add(other)
        self.assigned_at = {}
        for var in self.writes:
            position = self._owned_assignment(var)
            if position is not None:
                self.assigned_at[var] = position
        self.donors = sorted(self.assigned_at, key=lambda var: var.name)

    def _visit(self, block, path):
        for index, stmt in enumerate(block):
            here = path + ((id(block), index, type(stmt)),)
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    self.reads[atom] = self.reads.get(atom, 0) + 1
            for atom in list(stmt.reads()) + list(stmt.writes()):
                if isinstance(atom, Var):
                    self.touches.setdefault(atom, []).append(here)
            for var in stmt.writes():
                self.writes.setdefault(var, []).append((stmt, here))
            if isinstance(stmt, Push):
                self.kept.add(stmt.value)
            if isinstance(stmt, Assign) and stmt.prim == "placeholder":
                self.placeheld.add(stmt.target)
            if isinstance(stmt, Assign) and stmt.prim == "empty" and not stmt.inplace and stmt.target.type.ndim > 0:
                self.allocations.append((block, index, stmt, here))
            for inner in stmt.blocks():
                self._visit(inner, here)

    def _owned_assignment(self, var):
        """The position of the one assignment giving ``var`` a fresh array, if ``var`` is owned."""
        if not isinstance(var, Var) or var.type.ndim == 0 or var in self.fn.params:
            return None
        assignments = [(stmt, path) for stmt, path in self.writes[var]
                       if not (type(stmt) in (SetItem, AccumItem) or _adds_in_place(stmt))]
        if len(assignments) != 1:
            return None
        stmt, path = assignments[0]
        if not isinstance(stmt, Assign) or not _fresh(stmt) or self.viewers(var) & self.kept:
            return None
        if any(arg in self.placeheld for arg in stmt.args):
            return None  # the argument may still be its placeholder (an empty array) there, whatever its shape says
        if self.roots.get(var) != {var}:  # also bound to (a view of) other memory somewhere
            return None
        return path

    def written_into_reader(self, var):
        """Whether codegen may write ``var``'s expression into the one statement reading it (a
        temporary read once), so that numba fuses the two: taking its memory would cost a pass."""
        return var.is_temp and self.reads.get(var, 0) == 1

    def viewers(self, var):
        """``var`` and every array that may share its memory."""
        return self.viewers_of.get(var, set()) | {var}

    def live_touches(self, donor, allocation):
        """The liveness of ``donor``'s memory at ``allocation`` (a position), over the whole loop
        nest: the touches of that memory that may run at or after the allocation while it still
        holds the value the donor's assignment gave it, as (variable, position); None when the
        allocation may run more than once per run of that assignment (it sits in a loop the
        donor's block does not hold, or before the assignment): then every read of the donor in
        a later iteration of that loop, the allocation's own loop among them, is a read after
        the allocation, and the target of an earlier iteration would be this one's.

        A touch is dead only when it runs after the assignment and before the allocation in
        every pass (``_between``) and reads the donor's current value: the donor itself (its
        one assignment gives it), or a name for its memory bound after the assignment, before
        the touch, in every pass (``_bound_in_pass``). A name carried from an earlier iteration
        of any enclosing loop (``prev = d`` below the read of ``prev``) holds an earlier
        value's memory: its reads are live."""
        assigned = self.assigned_at[donor]
        depth = len(assigned) - 1
        if not _in_block_of(allocation, assigned, depth) or allocation[depth][1] <= assigned[depth][1] \
                or any(step[2] not in _RUN_ONCE for step in allocation[depth:-1]):
            return None
        live = []
        for viewer in sorted(self.viewers(donor), key=lambda var: var.name):
            bindings = [path for stmt, path in self.writes.get(viewer, []) if isinstance(stmt, Assign)]
            for touch in self.touches.get(viewer, []):
                if touch == assigned:
                    continue
                current = viewer is donor or any(_bound_in_pass(binding, touch, assigned, depth) for binding in bindings)
                if not (current and _between(touch, assigned, allocation, depth)):
                    live.append((viewer, touch))
        return live


def _in_block_of(position, assigned, depth):
    """Whether ``position`` lies in the block of the statement at ``assigned`` (``depth`` deep)."""
    return len(position) > depth and position[:depth] == assigned[:depth] and position[depth][0] == assigned[depth][0]


def _bound_in_pass(binding, touch, assigned, depth):
    """Whether the statement at ``binding`` runs after the assignment at ``assigned`` and
    before the statement at ``touch`` (or is it) whenever ``touch`` runs: it lies in a block
    enclosing ``touch`` below the assignment's block, before ``touch``'s statement there."""
    if not _in_block_of(binding, assigned, depth) or binding[depth][1] <= assigned[depth][1]:
        return False
    last = len(binding) - 1
    if len(touch) <= last or binding[:last] != touch[:last] or binding[last][0] != touch[last][0]:
        return False
    return binding[last][1] < touch[last][1] or binding == touch


def _between(touch, assigned, allocation, depth):
    """Whether the statement at ``touch`` runs after the assignment at ``assigned`` and
    before the allocation, each time they run (never in the same pass after it)."""
    if not _in_block_of(touch, assigned, depth) or touch[depth][1] <= assigned[depth][1]:
        return False  # elsewhere, or before the assignment (a loop's previous iteration)
    level = depth
    while True:
        if touch[level][1] != allocation[level][1]:
            return touch[level][1] < allocation[level][1]
        level += 1  # inside the ``if`` that holds the allocation
        if level >= len(allocation) or level >= len(touch):
            return False  # the allocation itself, or its ``if`` statement
        if touch[level][0] != allocation[level][0]:
            return True  # the other branch: never runs with the allocation


def _loop_writing(block, index, target):
    """The index in ``block`` of the loop that first uses ``target`` after its allocation at
    ``index``, or None when another statement uses it first. (Generated code may evaluate an
    expression read once later than the IR says, but never past the start of a loop.)"""
    for position in range(index + 1, len(block)):
        if any(target in s.reads() or target in s.writes() for s in walk([block[position]])):
            return position if isinstance(block[position], For) else None
    return None


def _read_point_by_point(donor, target, late, block, allocation, loop_index):
    """Whether every touch in ``late`` is a read of ``donor`` at the current point of the loop
    nest at ``loop_index`` in ``block`` (the first use of ``target`` after its allocation),
    before the nest writes ``target`` at that point, and the nest writes ``target`` at no
    other point: then each point of ``donor`` is read before the same point of ``target``
    overwrites it."""
    level = len(allocation) - 1
    if any(var is not donor or not _in_block_of(touch, allocation, level) or touch[level][1] != loop_index
           for var, touch in late):
        return False
    nest = _perfect_nest(block[loop_index])
    if nest is None or len(nest[0]) != donor.type.ndim:
        return False
    indices, body = nest
    written = False
    for stmt in body:
        if stmt.blocks() or any(var in indices for var in stmt.writes()):
            return False
        if isinstance(stmt, Assign) and stmt.target is target:  # rebinds the name: not this buffer's loop
            return False
        if donor in stmt.reads() or donor in stmt.writes():
            if written or not (isinstance(stmt, Assign) and stmt.prim == "getitem" and _at_point(stmt, indices)):
                return False
        if target in stmt.writes() and not isinstance(stmt, Assign):
            if [tuple(item) for item in stmt.items] != [("int", index) for index in indices]:
                return False
            written = True
    return True


def _perfect_nest(loop):
    """(index variables, innermost body) of a nest of ``for`` loops with nothing but comments
    between them, or None."""
    indices = []
    while isinstance(loop, For):
        indices.append(loop.index)
        inner = [stmt for stmt in loop.body if not isinstance(stmt, Comment)]
        if len(inner) != 1 or not isinstance(inner[0], For):
            return indices, loop.body
        loop = inner[0]
    return None


def _at_point(getitem, indices):
    """Whether the ``getitem`` Assign reads its array at ``[i, j, ...]``, the nest's indices."""
    items = getitem.params["items"]
    return len(items) == len(indices) and all(
        item[0] == "int" and getitem.args[item[1]] is index for item, index in zip(items, indices))


def _memory_roots(fn):
    """Var -> the arrays whose memory it may be, as ``ir/memory.py`` finds them but assuming
    that any array result not known to be new may be (a view of) any of its array arguments:
    ``rt.unbroadcast(g, x)`` is ``g`` itself when the shapes already agree."""
    roots = {p: {p} for p in fn.params if p.type.ndim > 0}
    changed = True
    while changed:
        changed = False
        for stmt in walk(fn.body):
            if not isinstance(stmt, Assign) or stmt.target.type.ndim == 0:
                continue
            new = {stmt.target}
            if not _fresh(stmt):
                for arg in stmt.args:
                    if isinstance(arg, Var) and arg.type.ndim > 0:
                        new |= roots.get(arg, {arg})
            have = roots.setdefault(stmt.target, set())
            if not new <= have:
                have |= new
                changed = True
    return roots


def _adds_in_place(stmt):
    """``d += x``: writes into ``d``'s own memory (any other ``inplace`` form rebinds ``d``)."""
    return isinstance(stmt, Assign) and stmt.inplace and stmt.prim == "add" and stmt.args[0] is stmt.target


def _fresh(stmt):
    if stmt.target.type.ndim == 0 or stmt.prim in ("alias", "getitem"):
        return False
    if has_kind(stmt.prim, Kind.FRESH):
        return True
    return has_kind(stmt.prim, Kind.ELEMENTWISE) and not has_kind(stmt.prim, Kind.VIEW) and \
        any(isinstance(a, Var) and a.type.ndim > 0 for a in stmt.args)
