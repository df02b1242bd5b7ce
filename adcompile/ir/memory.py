"""Which variables may share memory: numpy views and aliases.

In the IR every variable holds a value, but the generated numpy code gives some results as
views of their argument (``w[1:]``, ``x.T``, ``y = x``, a reshape): a write into one array
changes every variable that views its memory. The analyses that move or keep values across
writes (reverse mode's saving, common subexpressions, the code generator's inlining) ask
``memory_roots`` which arrays a variable may view.

    w = x.copy()       # roots: {w}
    v = w[1:]          # roots: {w}
    t = v.T            # roots: {w}
    b = rt.unbroadcast(g, w)   # roots: {b, g}: g itself when the shapes match (OWNED_LIKE_FIRST)

A result that is its first argument's whole buffer or a new array (``Kind.OWNED_LIKE_FIRST``)
may be that argument: it shares its memory as far as any analysis can tell, and a later write
into it (an adjoint accumulated in place, ``b += c``) writes into the argument. (Random program
48003101: common subexpressions made ``_t_4 = -by1`` stand for a second ``-by1`` after
``by = rt.unbroadcast(_t_4, y)`` had become an accumulator updated in place.)
"""
from .nodes import Assign, For, SetItem, Var, While, walk
from .primitives import Kind, has_kind


def is_view(stmt):
    """Whether the Assign ``stmt``'s array result may be a view of its first argument."""
    if stmt.target.type.ndim == 0 or not stmt.args or not isinstance(stmt.args[0], Var):
        return False
    if stmt.prim == "getitem":
        return all(item[0] != "array" for item in stmt.params["items"])
    if stmt.prim == "diag":  # the diagonal of a matrix is a (read-only) view in numpy
        return stmt.args[0].type.ndim == 2
    return has_kind(stmt.prim, Kind.VIEW)


def _may_be_first_argument(stmt):
    """Whether the Assign ``stmt``'s new array may be its first argument's buffer itself."""
    return (has_kind(stmt.prim, Kind.OWNED_LIKE_FIRST) and isinstance(stmt.args[0], Var)
            and stmt.args[0].type.ndim > 0)


def memory_roots(body, params):
    """Var -> the set of Vars whose memory it may be (itself for a fresh array)."""
    roots = {p: {p} for p in params if p.type.ndim > 0}
    # (target, the array it views or None, the array whose buffer it may be or None), for every
    # array Assign, custom Function regions too: their saved inputs may be views
    edges = [(stmt.target, stmt.args[0] if is_view(stmt) else None,
              stmt.args[0] if _may_be_first_argument(stmt) else None)
             for stmt in walk(body) if isinstance(stmt, Assign) and stmt.target.type.ndim > 0]
    changed = True
    while changed:
        changed = False
        for target, source, first in edges:
            new = roots.get(source, {source}) if source is not None else {target}
            if first is not None:
                new = new | roots.get(first, {first})
            have = roots.setdefault(target, set())
            if not new <= have:
                have |= new
                changed = True
    return roots


def sharing(variables, roots):
    """``variables`` and every array whose memory one of them may be."""
    out = set(variables)
    for var in variables:
        out |= roots.get(var, set())
    return out


def _program_order(body):
    """(id(stmt) -> its index in program order, id(stmt) -> [(id(block), index of the statement
    of that block holding it)] from the outermost block in, the (first, last) index span of every loop)."""
    position, chains, loops = {}, {}, []

    def visit(block, chain):
        for stmt in block:
            first = position[id(stmt)] = len(position)
            chains[id(stmt)] = inner_chain = chain + [(id(block), first)]
            for inner in stmt.blocks():
                visit(inner, inner_chain)
            if isinstance(stmt, (For, While)):
                loops.append((first, len(position) - 1))

    visit(body, [])
    return position, chains, loops


def converted_alias_conflict(body, conversions, params, results):
    """The first write that makes a converted alias differ from numpy, as (conversion, SetItem,
    whether the SetItem writes the copy), or None.

    Invariant: where numpy binds a name to an existing array (``M = A``) and compiled code
    converts it instead (``M = A.astype(np.float64)``: numba keeps one dtype per variable, and
    another assignment widens ``M``; or a parameter widened at entry), ``M`` is a copy where
    numpy shares ``A``'s memory. That is sound only while no write into one of the two memories
    may run after the conversion while the other is still observed: read later (the copy: before
    ``M`` is bound again), or, for memory of a parameter, seen by the caller. ``conversions``:
    the converting Assigns (target: the copy, ``args[0]``: the array numpy would share). "May run
    after": later in program order, or in one loop. A read does not see the memory a write
    changed when every path from the write to it binds the variable read anew: ``M`` in a block
    holding the write, after it; or any variable to a new array (not a view, not possibly its
    argument's buffer), before the read in a block holding the read, the write not between the
    two (the temporary ``t`` of ``M = x * 2.0 if c else y`` in a loop, which each iteration
    computes and converts anew: random program 70007783). Conservative otherwise."""
    roots = memory_roots(body, params)
    position, chains, loops = _program_order(body)
    end = len(position)  # the return's results are read after every statement

    def may_follow(a, b):
        return b > a or any(first <= a <= last and first <= b <= last for first, last in loops)

    # (position, Var read, id of the reading statement, None for the results)
    reads = [(position[id(stmt)], atom, id(stmt)) for stmt in walk(body) for atom in stmt.reads()
             if isinstance(atom, Var)]
    reads += [(end, atom, None) for atom in results if isinstance(atom, Var)]
    writes = [stmt for stmt in walk(body) if isinstance(stmt, SetItem)]
    bindings = {}  # Var -> (id(block), index) of the Assigns binding it
    fresh = {}  # Var -> (id(block), index) of the Assigns binding it to a new array
    for stmt in walk(body):
        if isinstance(stmt, Assign):
            bindings.setdefault(stmt.target, []).append(chains[id(stmt)][-1])
            if stmt.target.type.ndim > 0 and not is_view(stmt) and not _may_be_first_argument(stmt):
                fresh.setdefault(stmt.target, []).append(chains[id(stmt)][-1])
    outside = {p for p in params if p.type.ndim > 0}

    def rebound_between(copy, write, read_at):
        """Whether every path from ``write`` to the read at ``read_at`` binds ``copy`` anew: a
        binding after the write in a block holding it, the read not between the two."""
        holding = dict(chains[id(write)])
        return any(block in holding and holding[block] < at and not holding[block] <= read_at < at
                   for block, at in bindings.get(copy, ()))

    def fresh_before(var, write, reader):
        """Whether every path from ``write`` to the statement ``reader`` (an id) binds ``var`` to a
        new array: a binding before the reader in a block holding it, the write, if that block
        holds it too, not between the two (a path from outside a block enters it at its top)."""
        if reader is None:
            return False
        holding, writing = dict(chains[reader]), dict(chains[id(write)])
        return any(block in holding and at < holding[block] and not at < writing.get(block, -1) <= holding[block]
                   for block, at in fresh.get(var, ()))

    for conversion in conversions:
        copy, source = conversion.target, conversion.args[0]
        if not isinstance(source, Var) or id(conversion) not in position:
            continue
        at = position[id(conversion)]
        source_memory = roots.get(source, {source})
        for write in writes:
            write_at = position[id(write)]
            if not may_follow(at, write_at):
                continue
            written = roots.get(write.array, {write.array})
            later = [(read_at, var) for read_at, var, reader in reads
                     if may_follow(write_at, read_at) and not fresh_before(var, write, reader)]
            # the source's memory written: the copy, read later, misses the write
            if written & source_memory and any(copy in roots.get(var, {var}) and not rebound_between(copy, write, read_at)
                                               for read_at, var in later):
                return conversion, write, False
            # the copy written: the source's array, read later or the caller's, misses the write
            if copy in written and (source_memory & outside
                                    or any(roots.get(var, {var}) & source_memory for _, var in later)):
                return conversion, write, True
    return None
