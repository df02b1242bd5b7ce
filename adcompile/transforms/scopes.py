"""Where each variable lives: its definition sites and its innermost enclosing block.

A block is identified by its *path*: the sequence of (statement id, block number) pairs
from the function body down to it. The scope of a variable is the longest common prefix of
the paths of all statements that read or write it; its adjoint is created at the start of
that block's backward sweep.

Also here: which arrays may share memory (views and aliases), and the check that rejects,
before reverse mode, in-place writes whose effect on another variable the IR's value
semantics would miss:

    y = x            # or y = x[1:], for row in X, y = x.T ...
    y[0] = 1.0       # AdCompileError: 'y' may share memory with 'x'
"""
from ..ir.memory import is_view, memory_roots
from ..ir.indexing import items_with_atoms, result_ndim
from ..errors import AdCompileError, located
from ..ir.nodes import AccumItem, Assign, Const, For, SetItem, Var, While, walk


class VarInfo:
    __slots__ = ("defs", "reads", "paths")

    def __init__(self):
        self.defs = []    # (stmt, loop depth, path) of every assignment
        self.reads = []   # (stmt, path) of every read
        self.paths = []


def _common_prefix(paths):
    prefix = list(paths[0])
    for path in paths[1:]:
        n = 0
        while n < min(len(prefix), len(path)) and prefix[n] == path[n]:
            n += 1
        del prefix[n:]
    return tuple(prefix)


class Scopes:
    def __init__(self, fn):
        self.info = {}
        self.loop_paths = set()  # paths of loop bodies
        for p in fn.params:
            self._get(p).paths.append(())
        self._visit(fn.body, (), 0)
        for atom in fn.results:
            if isinstance(atom, Var):
                self._get(atom).reads.append((None, ()))
                self._get(atom).paths.append(())

    def _get(self, var):
        if var not in self.info:
            self.info[var] = VarInfo()
        return self.info[var]

    def _visit(self, block, path, depth):
        for stmt in block:
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    info = self._get(atom)
                    info.reads.append((stmt, path))
                    info.paths.append(path)
            for var in stmt.writes():
                info = self._get(var)
                info.defs.append((stmt, depth, path))
                info.paths.append(path)
            for k, inner in enumerate(stmt.blocks()):
                is_loop = isinstance(stmt, (For, While))
                inner_path = path + ((id(stmt), k),)
                if is_loop:
                    self.loop_paths.add(inner_path)
                self._visit(inner, inner_path, depth + is_loop)

    def scope(self, var):
        info = self.info.get(var)
        return _common_prefix(info.paths) if info and info.paths else ()

    def loop_depth_of_path(self, path):
        return sum(1 for n in range(1, len(path) + 1) if path[:n] in self.loop_paths)

    def is_multiply_defined(self, var, params):
        info = self.info.get(var)
        if info is None:
            return False
        if len(info.defs) + (var in params) > 1:
            return True
        return any(depth > self.loop_depth_of_path(self.scope(var)) for _, depth, _ in info.defs)

    def is_overwritten(self, var, params):
        """True if an assignment to ``var`` may replace a value the program computed before."""
        info = self.info.get(var)
        if info is None:
            return False
        return len(info.defs) + (var in params) > 1 or any(depth > 0 for _, depth, _ in info.defs)

    def is_rebound(self, var, params):
        """Like ``is_overwritten``, counting only assignments of a new value (an in-place write
        keeps the array's shape)."""
        info = self.info.get(var)
        if info is None:
            return False
        binds = [depth for stmt, depth, _ in info.defs if not isinstance(stmt, SetItem)]
        return len(binds) + (var in params) > 1 or any(depth > 0 for depth in binds)

    def single_local_use(self, var):
        """True for a temp defined once and read once, both in the same block."""
        info = self.info.get(var)
        return (info is not None and var.is_temp and len(info.defs) == 1 and len(info.reads) == 1
                and info.defs[0][2] == info.reads[0][1])


# ---------------------------------------------------------------------- shared memory
ALIAS_HINT = ("adcompile differentiates arrays as values and cannot follow a write through "
              "memory shared by two variables (a slice or row of an array, `y = x`, "
              "`for row in X`, reshape, ravel or .T share memory)")


ENTRY = -1  # the program position of the parameters' values


class _Positions:
    """Program positions of statements and the loops enclosing each."""

    def __init__(self, body):
        self.pos, self.loops, self.defs, self.reads, self.ids = {}, {}, {}, {}, {}
        self.block_of, self.enclosing_blocks, self._stmts = {}, {}, {}
        self._visit(body, (), ())

    def _visit(self, block, loops, blocks):
        blocks = blocks + (id(block),)
        for stmt in block:
            k = len(self.pos)
            self.pos[id(stmt)] = k
            self.ids[k] = id(stmt)
            self.loops[id(stmt)] = loops
            self.block_of[id(stmt)] = id(block)
            self.enclosing_blocks[id(stmt)] = blocks
            self._stmts[id(stmt)] = stmt
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    self.reads.setdefault(atom, []).append(stmt)
            for var in stmt.writes():
                self.defs.setdefault(var, []).append(stmt)
            inner_loops = loops + (id(stmt),) if isinstance(stmt, (For, While)) else loops
            for inner in stmt.blocks():
                self._visit(inner, inner_loops, blocks)

    def fresh_before(self, array, write, d):
        """Whether ``array`` gets a new array (not a view) between position ``d`` and
        ``write``: by a statement of ``write``'s own block before it, and not before ``d``
        when ``d`` is between them too. A view made at ``d`` then is not of the memory written."""
        w = self.pos[id(write)]
        for f in self.defs.get(array, []):
            f_pos = self.pos[id(f)]
            if (isinstance(f, Assign) and not is_view(f) and self.block_of[id(f)] == self.block_of[id(write)]
                    and f_pos < w and not f_pos < d < w):
                return True
        return False

    def sharing_defs(self, view, memory, roots, write):
        """Positions of the definitions of ``view`` that may make it share the memory of the
        arrays in ``memory`` as it is at ``write`` (a view of one of them, or one of them)."""
        out = []
        for d in self.defs.get(view, []):
            if isinstance(d, Assign):
                if is_view(d):
                    shared = roots.get(d.args[0], {d.args[0]}) & memory
                    if not shared or all(self.fresh_before(m, write, self.pos[id(d)]) for m in shared):
                        continue  # a view of other memory
                elif view not in memory:
                    continue  # a new array
            out.append(self.pos[id(d)])
        return out

    def rebound_between(self, view, since, read):
        """Whether ``view`` is assigned on every path from the statement ``since`` to ``read``,
        so that ``read`` cannot see the value ``view`` had at ``since``. The IR has no jumps, so
        an assignment ``k`` after ``since`` is on every such path when ``k`` is in ``read``'s own
        block or a block around it, before ``read``; or when ``k`` is in a block around
        ``since`` that ``read`` is not in (leaving that block goes through ``k``)."""
        s, r = self.pos[id(since)], self.pos[id(read)]
        around_read, around_since = self.enclosing_blocks[id(read)], self.enclosing_blocks[id(since)]
        for k in self.defs.get(view, []):
            position, block = self.pos[id(k)], self.block_of[id(k)]
            if s < position and ((position < r and block in around_read)
                                 or (block in around_since and block not in around_read)):
                return True
        return False

    def rebound_in_iteration_before(self, var, stmt):
        """Whether ``var`` is assigned before ``stmt`` on every path from the start of the
        innermost loop around ``stmt`` (so no value from an earlier iteration reaches it)."""
        loops = self.loops[id(stmt)]
        if not loops:
            return False
        start, here = self.pos[loops[-1]], self.pos[id(stmt)]
        around = self.enclosing_blocks[id(stmt)]
        return any(start < self.pos[id(k)] < here and self.block_of[id(k)] in around
                   for k in self.defs.get(var, []))

    def read_after(self, view, write, defs):
        """Whether a value of ``view`` made before ``write`` (at one of the positions ``defs``)
        may be read after it: later in the program, or in a later iteration of a loop around
        both, unless ``view`` is assigned again on every path to the read (an approximation
        that errs on the side of yes)."""
        w = self.pos[id(write)]
        for read in self.reads.get(view, []):
            if read is write and write.value is not view:
                continue
            r = self.pos[id(read)]
            for d in defs:
                if d == ENTRY:  # a parameter's value on entry
                    gone, made_in = False, ()
                else:
                    made = self.ids[d]
                    gone, made_in = self.rebound_between(view, self._stmts[made], read), self.loops[made]
                if d < w < r and not (gone or self.rebound_between(view, write, read)):
                    return True
                shared = set(self.loops[id(read)]) & set(self.loops[id(write)])
                for loop in shared:
                    d_in = loop in made_in
                    carried = (r <= w and ((not d_in and d < r) or (d_in and r < d < w))) or (d_in and w < r < d)
                    # a value carried into an iteration is gone once the iteration rebinds view
                    if carried and not (gone or self.rebound_between(view, self._stmts[loop], read)):
                        return True
        return False


def _step(item):
    step = item[3] if len(item) > 3 else None
    return 1 if step is None else (step.value if isinstance(step, Const) else step)


def _same_layout(items_a, items_b):
    """Whether two basic indices of one array select with the same kinds and steps on every
    axis, or with the same kinds and a single slice whose constant steps have opposite signs
    (then numpy copies an overlapping value exactly as if it were a copy: equal strides it
    copies in the safe direction, and strides of opposite signs it copies through a temporary;
    checked against numpy on all pairs of common indices of 1-d and 2-d arrays, and on random
    pairs of reversed slices, ``tests/transforms/test_overlapping_writes.py``)."""
    if len(items_a) != len(items_b) or any(a[0] != b[0] for a, b in zip(items_a, items_b)):
        return False
    slices = [(_step(a), _step(b)) for a, b in zip(items_a, items_b) if a[0] == "slice"]
    if all(step_a == step_b or step_a is step_b for step_a, step_b in slices):
        return True
    return (len(slices) == 1 and all(isinstance(step, int) for step in slices[0])
            and slices[0][0] * slices[0][1] < 0)


def _overlapping_value(write, memory, roots, positions):
    """Whether the value ``write`` writes may be a view of the memory it writes into, selected
    with another layout, into a 1-d region (``w[:, 2] = w[1]``): numpy then copies it element
    by element, in an order of its own, which value semantics cannot follow. A view with the
    same layout (``w[1:] = w[:-1]``) is copied by numpy as if it were a copy, and so is any
    value written into a region of two or more dimensions by basic indexing (``u[1:] = u[:3, ::-1]``):
    numpy copies an overlapping value first there (numba too; checked against numpy on
    random pairs of 2-d views, ``tests/transforms/test_overlapping_writes.py``)."""
    if result_ndim(write.array.type, write.items) > 1 and all(item[0] != "array" for item in write.items):
        return False
    value = write.value
    for d in positions.defs.get(value, []):
        if (isinstance(d, Assign) and is_view(d) and roots.get(d.args[0], {d.args[0]}) & memory
                and not (d.prim == "getitem" and d.args[0] is write.array
                         and _same_layout(items_with_atoms(d.params["items"], d.args), write.items))
                and not positions.rebound_between(value, d, write)
                and not (positions.pos[id(d)] > positions.pos[id(write)]  # from an earlier iteration
                         and positions.rebound_in_iteration_before(value, write))):
            return True
    return False



def _shown(fn, var, roots, positions):
    """How a message names ``var``: ``'v'`` for the user's variable v (an SSA version of v or a
    temporary bound to v is v too: ``Function.user_names``, kept by the translator); a temporary
    no name was bound to, by the arrays it views and the line that makes it."""
    names = getattr(fn, "user_names", {})
    if var in names or not var.name.startswith("_"):
        return f"'{names.get(var, var.name)}'"
    viewed = sorted({names.get(root, root.name) for root in roots.get(var, ()) if root is not var
                     and (root in names or not root.name.startswith("_"))})
    line = next((f" at line {d.loc.lineno}" for d in positions.defs.get(var, []) if d.loc is not None), "")
    if viewed:
        return f"a view of {' or '.join(repr(name) for name in viewed)}" + (f" made{line}" if line else "")
    return f"the array computed{line}" if line else "an array adcompile made"


def check_shared_memory_writes(fn):
    """Raise AdCompileError at an in-place write whose effect the value semantics of the IR
    would miss: a write into an array (or a view or alias of one) while another variable
    sharing that memory, made before the write, is still read afterwards. (A write into a view
    that nothing else reads afterwards is differentiated like a write into a fresh array.)"""
    writes = [s for s in walk(fn.body, into_custom=False)
              if isinstance(s, SetItem) and not isinstance(s, AccumItem)]
    if not writes:
        return
    roots = memory_roots(fn.body, fn.params)
    positions = _Positions(fn.body)
    results = {atom for atom in fn.results if isinstance(atom, Var)}  # read after every write
    for stmt in writes:
        array = stmt.array
        memory = roots.get(array, {array})  # the arrays whose memory the write changes
        value = stmt.value
        if (isinstance(value, Var) and value.type.ndim and value is not array
                and _overlapping_value(stmt, memory, roots, positions)):
            raise located(AdCompileError,
                          f"cannot differentiate the in-place write into {_shown(fn, array, roots, positions)}: the value "
                          f"written is a view of the same memory, so numpy's result depends on the "
                          f"order in which it copies the elements. Write a copy of the value "
                          f"(append .copy() to it).", stmt.loc)
        for other, its_roots in sorted(roots.items(), key=lambda item: item[0].uid):
            if other is array or not its_roots & memory:
                continue
            defs = positions.sharing_defs(other, memory, roots, stmt)
            if other in fn.params and other in memory:
                defs.append(ENTRY)
            returned = other in results and any(d < positions.pos[id(stmt)] for d in defs)
            if returned or positions.read_after(other, stmt, defs):
                written, shared = _shown(fn, array, roots, positions), _shown(fn, other, roots, positions)
                relation = (f"it may share memory with {shared}, which is used after the write"
                            if other in memory else
                            f"{shared}, which shares its memory, is used after the write")
                raise located(AdCompileError,
                              f"cannot differentiate the in-place write into {written}: {relation}. "
                              f"{ALIAS_HINT}. Make {written} or {shared} a copy (.copy()), "
                              f"or read {shared} before writing.", stmt.loc)
