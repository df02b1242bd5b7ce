"""Scalar replacement of small vectors: a 1-d array of a few elements that is only ever read
and written element by element, at constant indices, becomes one scalar per element.

Per-observation code builds such vectors (``predicted = np.array([u * f + cx, v * f + cy])``,
then ``predicted[0] - obs[i, 0]``), and reverse mode gives each one an adjoint of the same
kind (``bpredicted = np.zeros_like(predicted)``, ``bpredicted[1] += bdv``, ``... = bpredicted[0]``).
In a loop each is an allocation per iteration, which numba does not remove; as scalars they
cost nothing:

    predicted = np.array([a, b])      ->   predicted_0 = a
                                            predicted_1 = b
    du = predicted[0] - o             ->   _t = predicted_0 ... (getitem becomes a copy)
    bp = np.zeros_like(predicted)     ->   bp_0 = 0.0; bp_1 = 0.0
    bp[1] += g                        ->   bp_1 = bp_1 + g

Legal because the vector has no identity the program can observe: the candidate's every
definition makes a new array of the same constant length n (``vector`` of n scalars, or
``zeros_like`` of another candidate of length n), and every other occurrence of its name is
an element read ``a[k]``, an element write ``a[k] = s`` or ``a[k] += s`` at a constant k in
range, or the argument of such a ``zeros_like``. No view, alias, tape, call, loop or result
sees the array, so element k of whichever array the name holds is always the value last
assigned to element k through that name, which is what the scalar ``a_k`` holds. One alias
is allowed, as a definition: ``t = s`` right before ``s`` is bound to a new vector, with no
element write through ``t`` anywhere (reverse mode's ``_gq = bq; bq = np.zeros_like(q)``):
no write can reach the array the two names shared, so ``t_k = s_k`` copies are the same.
That condition is checked in one place, :func:`_candidates`. Scalars keep the vector's dtype:
a value of another type (or a float32 vector's untyped constant) disqualifies it.
"""
from ..ir.nodes import AccumItem, Assign, Comment, Const, CustomCall, SetItem, Var, walk
from ..ir.types import FLOAT32, FLOAT64, INT64, Type
from .uses import namer_for

MAX_LENGTH = 8  # longer vectors stay arrays: their element loops are worth keeping


def _constant_index(items, n):
    """The element index of ``[k]`` with a constant int k in range, or None."""
    if len(items) != 1 or items[0][0] != "int" or not isinstance(items[0][1], Const):
        return None
    k = items[0][1].value
    if not isinstance(k, int) or isinstance(k, bool) or not -n <= k < n:
        return None
    return k % n


def _read_index(stmt, n):
    """``k`` if ``stmt`` is ``t = a[k]`` with a constant k in range."""
    if stmt.prim != "getitem" or stmt.params.get("items") != (("int", 1),) or len(stmt.args) != 2:
        return None
    return _constant_index([("int", stmt.args[1])], n)


def _fits(atom, dtype):
    """Whether ``atom`` may be assigned to a scalar of ``dtype`` without changing its type in
    the generated code (an untyped constant is float64 or int64 there)."""
    if isinstance(atom, Var):
        return atom.type == Type(dtype)
    return dtype in (FLOAT64, INT64) and atom.type == Type(dtype)


def _with_next(block):
    """(statement, the next non-comment statement of its block or None), in every block."""
    statements = [stmt for stmt in block if not isinstance(stmt, Comment)]
    for stmt, following in zip(statements, statements[1:] + [None]):
        yield stmt, following
        for inner in stmt.blocks():
            yield from _with_next(inner)


def _is_copy_before_rebinding(stmt, following):
    """``t = s`` right before ``s`` is bound to a new vector (reverse mode's ``_gq = bq`` then
    ``bq = np.zeros_like(q)``): nothing can write the shared array between the two, so ``t``
    holds a copy of the values, provided nothing writes through ``t`` (checked by the caller)."""
    return (stmt.prim == "alias" and isinstance(stmt.args[0], Var) and isinstance(following, Assign)
            and following.target is stmt.args[0] and following.prim in ("vector", "zeros_like")
            and not following.inplace)


def _candidates(fn):
    """{vector variable: its length} of the vectors that may become scalars."""
    definitions = {}  # var -> its defining Assigns of the kinds below (other kinds: see _unsupported)
    copies = set()  # targets of a copy before rebinding
    for stmt, following in _with_next(fn.body):
        if not isinstance(stmt, Assign) or stmt.target.type.ndim != 1:
            continue
        if stmt.prim in ("vector", "zeros_like") or _is_copy_before_rebinding(stmt, following):
            definitions.setdefault(stmt.target, []).append(stmt)
            copies |= {stmt.target} if stmt.prim == "alias" else set()
    excluded = set(fn.params) | {a for a in fn.results if isinstance(a, Var)}
    for stmt in walk(fn.body):
        if isinstance(stmt, CustomCall):
            excluded |= set(stmt.outputs) | set(stmt.reads())
    lengths = {var: None for var in definitions if var not in excluded}
    while lengths:  # until no candidate drops out: each drop may disqualify others
        settled = False
        while not settled:  # zeros_like(v) and copies take v's length, along chains of them
            settled = True
            for var in list(lengths):
                ns = {len(s.args) if s.prim == "vector" else lengths.get(s.args[0]) for s in definitions[var]}
                n = next(iter(ns)) if len(ns) == 1 else None
                settled, lengths[var] = settled and n == lengths[var], n
        dropped = {var for var, n in lengths.items()
                   if n is None or not 0 < n <= MAX_LENGTH or var.type.dtype not in (FLOAT64, FLOAT32, INT64)}
        for stmt, following in _with_next(fn.body):
            dropped |= _unsupported_occurrences(stmt, following, lengths, copies)
        if not dropped:
            return lengths
        for var in dropped:
            lengths.pop(var, None)
    return lengths


def _unsupported_occurrences(stmt, following, lengths, copies):
    """The candidates ``stmt`` uses in a way other than an element read or write, or a
    definition as a new vector of their length (or a copy of one)."""
    def n_of(var):
        return lengths[var] or 0
    if isinstance(stmt, SetItem):  # also AccumItem
        bad = {a for a in stmt.reads()[1:] if isinstance(a, Var) and a in lengths}
        if stmt.array in lengths:
            if _constant_index(stmt.items, n_of(stmt.array)) is None or stmt.array in copies \
                    or not _fits(stmt.value, stmt.array.type.dtype):
                bad.add(stmt.array)
        return bad
    if isinstance(stmt, Assign):
        reads = [a for a in stmt.args if isinstance(a, Var) and a in lengths]
        target = stmt.target if stmt.target in lengths else None
        if target is not None:
            if stmt.inplace:
                return {target} | set(reads)
            if stmt.prim == "vector":
                if len(stmt.args) != n_of(target) or not all(_fits(a, target.type.dtype) for a in stmt.args):
                    return {target} | set(reads)
                return set(reads)
            if (stmt.prim == "zeros_like" or _is_copy_before_rebinding(stmt, following)) \
                    and stmt.args[0] in lengths and n_of(stmt.args[0]) == n_of(target) \
                    and stmt.args[0].type.dtype == target.type.dtype:
                return set()
            return {target} | set(reads)
        if reads and not (reads == [stmt.args[0]] and _read_index(stmt, n_of(reads[0])) is not None):
            return set(reads)
        return set()
    return {a for a in stmt.reads() + stmt.writes() if isinstance(a, Var) and a in lengths}


def _replace(stmt, scalars):
    """The statements replacing ``stmt`` (itself if it touches no candidate)."""
    if isinstance(stmt, SetItem) and stmt.array in scalars:
        parts = scalars[stmt.array]
        element = parts[_constant_index(stmt.items, len(parts))]
        if isinstance(stmt, AccumItem):
            return [Assign(element, "add", [element, stmt.value], loc=stmt.loc)]
        return [Assign(element, "alias", [stmt.value], loc=stmt.loc)]
    if not isinstance(stmt, Assign):
        return [stmt]
    if stmt.target in scalars:
        parts = scalars[stmt.target]
        if stmt.prim == "vector":
            return [Assign(part, "alias", [item], loc=stmt.loc) for part, item in zip(parts, stmt.args)]
        source = scalars[stmt.args[0]]
        if stmt.prim == "alias":  # a copy before rebinding
            return [Assign(part, "alias", [value], loc=stmt.loc) for part, value in zip(parts, source)]
        # zeros_like of a candidate: a zero of its dtype
        return [Assign(part, "zeros_like", [like], loc=stmt.loc) for part, like in zip(parts, source)]
    if stmt.args and isinstance(stmt.args[0], Var) and stmt.args[0] in scalars:
        parts = scalars[stmt.args[0]]
        return [Assign(stmt.target, "alias", [parts[_read_index(stmt, len(parts))]], loc=stmt.loc)]
    return [stmt]


def _rewrite_block(block, scalars):
    rebuilt = []
    for stmt in block:
        for inner in stmt.blocks():
            _rewrite_block(inner, scalars)
        rebuilt.extend(_replace(stmt, scalars))
    block[:] = rebuilt


def replace_small_vectors(fn):
    """Rewrite ``fn`` in place; returns True if any vector became scalars."""
    candidates = _candidates(fn)
    if not candidates:
        return False
    namer = namer_for(fn)
    scalars = {var: [Var(namer.fresh(f"{var.name}_{k}"), Type(var.type.dtype), is_temp=var.is_temp)
                     for k in range(n)]
               for var, n in sorted(candidates.items(), key=lambda item: item[0].name)}
    _rewrite_block(fn.body, scalars)
    return True
