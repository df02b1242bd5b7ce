"""Repeated updates of one array element in a loop body are made in a scalar: one read, one write.

Reverse mode adds into an adjoint once per use of a value, so a loop body using ``x[i]`` twice
updates ``bx[i]`` twice (the Rosenbrock gradient):

    bx[i] += -bt_7                    # becomes:  bx_i = bx[i] + -bt_7
    bt_3 = 2.0 * (x[i + 1] - _t_1 * _t_1) * 100.0
    bt_1 = 2.0 * _t_1 * -bt_3
    bx[i] += bt_1                     #           bx[i] = bx_i + bt_1

Each ``+=`` loads and stores memory, and LLVM cannot keep the element in a register between
them: as far as it knows the read of ``x[i + 1]`` between them may read ``bx``. Here the first
update reads the element into a scalar and adds to it, the updates between add to the scalar
(``bx_i += v``), and the last one writes the scalar plus its value back. Each addition is the
one the original update made, on the same values in the same order (``element + value``), and a
float32 element is rounded to float32 after each addition as its store did (``bx_i =
np.float32(bx_i + v)``: numba would otherwise keep a float64 sum in the scalar), so the results
are bitwise the same.

An update is an ``AccumItem`` ``a[idx] += v`` of a scalar ``v``, or the three statements the
frontend makes of a user's ``a[idx] += v`` (``t = a[idx]; s = t + v; a[idx] = s``, ``t`` and
``s`` read once, by the next of the three; the read becomes ``t = a_i``, the write ``a_i = s``
until the last update, which keeps its write). Updates of one element form a *run* when the
invariant below holds for every statement from the first update's first statement to the last
update's last, the updates' own reads and writes of the element excepted. Then nothing but the
updates sees the element between the first read and the last write, so keeping its value in a
scalar meanwhile changes nothing. The invariant, checked in ``_clean`` only (its conditions are
each about one update or one statement, so a run grows by checking what it gains):

1. no statement reads or writes the array or any array that may share its memory (a view of it,
   a name for it, as ``ir/memory.memory_roots`` says; an array of unknown memory, popped from a
   tape, counts as sharing), nor binds the array's name anew;
2. the element is the same: each update indexes it by the same atoms (the same ``Var`` objects,
   or equal integer constants), and no statement assigns any of them;
3. the statements are straight-line: no ``If``, ``For``, ``While`` or custom Function region;
4. each update indexes the array by integers only, one per axis (an integer-array index adds
   repeatedly at repeated indices: never merged), its value is a scalar, and the array holds
   float64 or float32 and is fresh: made in the function, never an argument or memory that may
   be one (``_Facts.fresh``), so that nobody else sees it while the function runs, also not after an
   exception raised between the updates.

Applied to every block inside a loop (the loops fusion wrote and the user's), after the loops
are built (``pipeline.py``); ``ADCOMPILE_MERGE_INCREMENTS=0`` turns it off.
"""
import os
from collections import Counter
from dataclasses import dataclass, field

from ..ir.builder import namer_for
from ..ir.indexing import index_params, items_with_atoms
from ..ir.memory import memory_roots
from ..ir.nodes import AccumItem, Assign, Const, CustomCall, For, If, Pop, SetItem, Var, While, vars_read, walk
from ..ir.types import F8, FLOAT32, FLOAT64, Type

_CONTROL = (If, For, While, CustomCall)


def merging_enabled():
    """Whether ``ADCOMPILE_MERGE_INCREMENTS`` allows the merge (on unless "0")."""
    return os.environ.get("ADCOMPILE_MERGE_INCREMENTS", "1") != "0"


def merge_repeated_increments(fn):
    """Rewrite, in place, each run of updates of one array element in a block inside a loop of
    ``fn`` (see the module docstring) into one read, scalar additions and one write; the number
    of runs rewritten."""
    runs = find_runs(fn)
    if runs:
        namer = namer_for(fn)
        for block, block_runs in runs:
            _rewrite(block, block_runs, namer)
    return sum(len(block_runs) for _, block_runs in runs)


def find_runs(fn):
    """[(block, [run, ...])] for every block inside a loop of ``fn`` holding runs to merge."""
    facts = _Facts(fn)
    found = []
    _find(fn.body, False, facts, found)
    return found


@dataclass
class _Update:
    """One update of an element (``key``: the array and its index atoms), from ``block[first]``
    to ``block[last]``; ``events`` are its statements reading or writing the element."""
    array: Var
    items: list  # [('int', atom), ...]
    key: tuple
    first: int
    last: int
    increment: AccumItem = None  # the AccumItem, or None for a read, add and write
    read: Assign = None
    add: Assign = None
    write: SetItem = None
    events: list = field(default_factory=list)


class _Facts:
    """What the legality check asks of the whole function: memory roots, read counts."""

    def __init__(self, fn):
        self.roots = memory_roots(fn.body, fn.params)
        self.params = set(fn.params)
        self.popped = {stmt.target for stmt in walk(fn.body) if isinstance(stmt, Pop)}
        self.uses = Counter(vars_read(fn.body))  # reads, a result's return among them
        self.uses.update(atom for atom in fn.results if isinstance(atom, Var))

    def memory(self, var):
        """The Vars whose memory ``var`` may be, or None when that is unknown (an array popped
        from a tape, or a variable no assignment gives an array)."""
        roots = self.roots.get(var)
        if roots is None or any(r not in self.roots or r in self.popped for r in roots):
            return None
        return roots

    def fresh(self, array):
        """Whether ``array`` is memory made in the function: no argument's (an argument may be
        any other argument's memory, which the caller sees)."""
        memory = self.memory(array)
        return memory is not None and not memory & self.params


def _clean(facts, block, start, stop, updates):
    """Whether a run of ``updates`` (in order) keeps the invariant of the module docstring over
    ``block[start:stop]``, the statements from the first update's first to the last one's last:
    the one place legality is decided. Each condition is about one update or one statement, so
    a run that held grows by checking the last update it had, the new one and the statements
    between."""
    array, items = updates[0].array, updates[0].items
    if array.type.dtype not in (FLOAT64, FLOAT32) or not facts.fresh(array):  # 4
        return False
    if len(items) != array.type.ndim or any(item[0] != "int" for item in items):  # 4
        return False
    for update in updates:
        if update.key != updates[0].key:  # 2
            return False
        value = (update.increment or update.write).value
        if value.type.ndim != 0 or (update.write is not None and value.type.dtype != array.type.dtype):  # 4
            return False
    memory = facts.memory(array)
    index_vars = {item[1] for item in items if isinstance(item[1], Var)}
    events = {id(stmt) for update in updates for stmt in update.events}
    for stmt in block[start:stop]:
        if isinstance(stmt, _CONTROL):  # 3
            return False
        if any(var in index_vars for var in stmt.writes()):  # 2
            return False
        if id(stmt) in events:
            continue
        for atom in list(stmt.reads()) + list(stmt.writes()):  # 1
            if isinstance(atom, Var) and atom.type.ndim > 0:
                shared = facts.memory(atom)
                if shared is None or shared & memory:
                    return False
    return True


def _find(block, in_loop, facts, found):
    if in_loop:
        runs = _runs_of_block(block, facts)
        if runs:
            found.append((block, runs))
    for stmt in block:
        for inner in stmt.blocks():
            _find(inner, in_loop or isinstance(stmt, (For, While)), facts, found)


def _runs_of_block(block, facts):
    """The runs of ``block``: per element, its updates in order, each run grown while ``_clean``
    holds for the statements up to the next update's last."""
    updates = {}
    for update in _updates(block, facts):
        updates.setdefault(update.key, []).append(update)
    runs = []
    for element_updates in updates.values():
        run = []
        for update in element_updates:
            if run and update.first > run[-1].last and _clean(facts, block, run[-1].last, update.last + 1,
                                                              [run[-1], update]):
                run.append(update)
                continue
            if len(run) > 1:
                runs.append(run)
            run = [update] if _clean(facts, block, update.first, update.last + 1, [update]) else []
        if len(run) > 1:
            runs.append(run)
    return runs


def _updates(block, facts):
    """Every update in ``block`` (``_update_at``), in order of their last statement."""
    last_write = {}  # Var -> index of the last statement of the straight-line stretch assigning it
    found = []
    for position, stmt in enumerate(block):
        if isinstance(stmt, _CONTROL):
            last_write = {}
            continue
        update = _update_at(block, position, last_write, facts)
        if update is not None:
            found.append(update)
        for var in stmt.writes():
            last_write[var] = position
    return found


def _update_at(block, position, last_write, facts):
    """The update ending with ``block[position]``, or None: its shape only (``_clean`` decides
    whether it may merge)."""
    stmt = block[position]
    if type(stmt) not in (AccumItem, SetItem) or not isinstance(stmt.array, Var) or stmt.array.type.ndim == 0:
        return None
    array = stmt.array
    key = (array, tuple(_item_key(item) for item in stmt.items))
    if type(stmt) is AccumItem:
        return _Update(array, list(stmt.items), key, position, position, increment=stmt, events=[stmt])
    # a write: of ``s = t + v`` (or ``v + t``) with ``t = array[idx]``, each read once, by the next
    s = stmt.value
    add = _assignment(block, last_write, s) if isinstance(s, Var) else None
    if add is None or add.prim != "add" or len(add.args) != 2 or facts.uses.get(s) != 1:
        return None
    for t in add.args:
        read = _assignment(block, last_write, t) if isinstance(t, Var) else None
        if read is None or read.prim != "getitem" or read.args[0] is not array or facts.uses.get(t) != 1:
            continue
        items = items_with_atoms(read.params["items"], read.args)
        if tuple(_item_key(item) for item in items) != key[1] or last_write[s] < last_write[t]:
            continue
        return _Update(array, list(stmt.items), key, last_write[t], position, read=read, add=add, write=stmt,
                       events=[read, stmt])
    return None


def _assignment(block, last_write, var):
    """The Assign of ``var`` last before here in the stretch, or None."""
    position = last_write.get(var)
    if position is None:
        return None
    stmt = block[position]
    return stmt if isinstance(stmt, Assign) and stmt.target is var else None


def _item_key(item):
    """An index item with its atoms compared as the same element needs: a Var by identity, a
    constant by type and value."""
    return (item[0],) + tuple(part if part is None or isinstance(part, Var)
                              else ("const", type(part.value).__name__, part.value) for part in item[1:])


def _rewrite(block, runs, namer):
    replacements = {}
    for run in runs:
        _rewrite_run(run, namer, replacements)
    block[:] = [new for stmt in block for new in replacements.get(id(stmt), [stmt])]


def _rewrite_run(run, namer, replacements):
    """Statements replacing each update's events: the first reads the element into a scalar,
    every one adds to it (as the original did: the element first), the last writes it."""
    array, items = run[0].array, run[0].items
    scalar_type = Type(array.type.dtype)
    single = array.type.dtype == FLOAT32
    scalar = Var(namer.fresh(_scalar_name(array, items)), scalar_type)

    def temp(prim, args, type_, **params):
        target = Var(namer.fresh("_t"), type_, is_temp=True)
        return target, Assign(target, prim, args, params)

    def add_to(element, value):
        """``element + value`` as the update computed it: a number added as a Python number
        (numba adds a float32 element and a float64 literal in float64)."""
        sum_type = F8 if isinstance(value, Const) and single else scalar_type
        return temp("add", [element, value], sum_type)

    def set_scalar(value, stmt):
        """``scalar = value``, rounded to float32 where the element is (as its store did)."""
        if single:
            return Assign(scalar, "as_dtype", [value], {"dtype": FLOAT32}, stmt.loc)
        return Assign(scalar, "alias", [value], loc=stmt.loc)

    for position, update in enumerate(run):
        first, last = position == 0, position == len(run) - 1
        if update.increment is not None:
            stmt = update.increment
            new = []
            if first:
                params, index_args = index_params(array.type, items)
                element, read = temp("getitem", [array, *index_args], scalar_type, **params)
                new.append(read)
            else:
                element = scalar
            if last:
                total, addition = add_to(element, stmt.value)
                new += [addition, SetItem(array, total, items, stmt.loc)]
            elif single:
                total, addition = add_to(element, stmt.value)
                new += [addition, set_scalar(total, stmt)]
            else:  # ``scalar = element + value``, written ``scalar += value`` after the first
                new.append(Assign(scalar, "add", [element, stmt.value], loc=stmt.loc, inplace=element is scalar))
            replacements[id(stmt)] = new
            continue
        if not first:
            replacements[id(update.read)] = [Assign(update.read.target, "alias", [scalar], loc=update.read.loc)]
        if not last:
            replacements[id(update.write)] = [set_scalar(update.write.value, update.write)]


def _scalar_name(array, items):
    atoms = [item[1] for item in items]
    if all(isinstance(atom, Var) and not atom.name.startswith("_") for atom in atoms):
        return "_".join([array.name] + [atom.name for atom in atoms])
    return f"{array.name}_element"

