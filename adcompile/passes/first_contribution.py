"""Assign an accumulator's first contribution instead of zero-filling it and adding to it.

Reverse mode zero-fills each adjoint and accumulates every contribution into it. When the
first thing that touches the zero-filled array is an accumulation, in the same block, that
contribution can simply be assigned:

    bt_7 = np.zeros_like(_t_7)          # removed
    bt_7 += 2.0 * _t_7 * g              # bt_7 = 2.0 * _t_7 * g

An accumulation into part of the array (``bx[:-1] += -bt_7``) stays one: accumulations
commute, so loop fusion (``lowering/``) can merge ``bx[:-1] += a`` and ``bx[1:] += b`` into
one loop, which an assignment into overlapping elements would forbid.

The whole-array form needs the contribution to have the zero-filled array's shape and dtype
(``bv += c`` broadcasts ``c``; ``bv = c`` would not), proven by the symbolic shapes
(``ir/shapes.py``), by the lengths a matrix product of the top-level block made equal before
it (``ir/dim_equalities.py``; the product is marked so that, should it be dead, a check of
those lengths stays in its place), or, inside one block, by ``same_shape.py``. The accumulator is updated in place later, so it must own its buffer: the statement computing
the contribution assigns the accumulator directly when it makes a new array (a primitive
declared OWNED_RESULT, an operator, or a numpy function of arrays; or one declared
OWNED_LIKE_FIRST, a transpose, of such an array) that nothing else reads; otherwise the
accumulator gets a copy, or only names the contribution's memory when neither is ever written
again and the accumulator is only read.
"""
from ..ir.dim_equalities import CHECK_MARK
from ..ir.memory import memory_roots, sharing
from ..ir.nodes import Assign, Var, walk
from ..ir.primitives import Kind, has_kind, primitive, template_for
from ..ir.shapes import infer_shapes
from .same_shape import Rebindings, rebound, same_in_block
from .uses import Uses


def _allocates(stmt):
    """Whether the Assign ``stmt`` surely gives a new array, owned by its target."""
    spec = primitive(stmt.prim)
    if spec.has(Kind.OWNED_RESULT):
        return True
    if not (spec.has(Kind.ELEMENTWISE) and stmt.target.type.ndim):
        return False
    return template_for(stmt.prim, [a.type for a in stmt.args], stmt.params).startswith("np.")


def _mentioned(stmt):
    """The Vars that ``stmt`` (or a statement nested in it) reads or writes."""
    return {atom for inner in walk([stmt]) for atom in list(inner.reads()) + list(inner.writes())
            if isinstance(atom, Var)}


class _FirstContributions:
    def __init__(self, fn):
        self.shapes = infer_shapes(fn)
        self.copies = []  # the copies the rewrites made, in case one need not copy
        self.facts(fn)
        self.changed = False

    def facts(self, fn):
        self.uses = Uses(fn)
        self.definitions, self.readers, self.writers = {}, {}, {}
        self.statements = list(walk(fn.body))
        for stmt in self.statements:
            if isinstance(stmt, Assign):
                self.definitions.setdefault(stmt.target, []).append(stmt)
            for var in stmt.writes():
                self.writers.setdefault(var, []).append(stmt)
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    self.readers.setdefault(atom, []).append(stmt)
        self.results = {atom for atom in fn.results if isinstance(atom, Var)}
        self.roots = memory_roots(fn.body, fn.params)

    def block(self, block):
        for stmt in block:
            for inner in stmt.blocks():
                self.block(inner)
        mentions = {}  # Var -> the positions of the statements mentioning it, in order
        for j, stmt in enumerate(block):
            for var in _mentioned(stmt):
                mentions.setdefault(var, []).append(j)
        rewritten = list(block)  # statements replaced in place, None where deleted
        self.rebindings = Rebindings(block)
        self.position = {id(stmt): j for j, stmt in enumerate(block)}
        for k, stmt in enumerate(block):
            if isinstance(stmt, Assign) and stmt.prim == "zeros_like" and not stmt.inplace:
                first = next((j for j in mentions[stmt.target] if j > k), None)
                if first is not None:
                    self.changed |= self.rewrite(block, rewritten, k, first)
        block[:] = [stmt for stmt in rewritten if stmt is not None]

    def rewrite(self, block, rewritten, zero_at, first):
        """Rewrite the zero fill at ``zero_at`` and the accumulation at ``first`` into
        ``rewritten`` (positions as in ``block``); whether done. The statements a rewrite
        changes (the zero fill, the accumulation into its target, the computation read only
        by that accumulation) are not changed by the rewrite of another zero fill."""
        zeros, touch = block[zero_at], block[first]
        var = zeros.target
        if not (isinstance(touch, Assign) and touch.inplace and touch.prim == "add" and touch.target is var
                and touch.args[0] is var and touch.args[1] is not var):
            return False
        contribution = touch.args[1]
        if contribution.type != var.type:
            return False
        products = self.shapes.same_at(contribution, zeros.args[0], touch)
        if products is None and not same_in_block(self.shapes, self.rebindings, block, zero_at, first,
                                                  contribution, zeros.args[0]):
            return False
        for product in products or ():  # should dead-code elimination drop it, a check stays
            product.params = {**product.params, CHECK_MARK: True}
        computed_at = self.owned_definition(block, zero_at, first, contribution) if var.type.ndim else None
        if computed_at is not None:  # `bv = <its computation>`: the accumulator takes its buffer
            before = rebound(block[computed_at])
            block[computed_at].target = var
            self.rebindings.changed(computed_at, before, rebound(block[computed_at]))
            rewritten[first] = None
        else:
            rewritten[first] = Assign(var, "copy" if var.type.ndim else "alias", [contribution], loc=touch.loc)
            self.copies.append(rewritten[first])
        rewritten[zero_at] = None
        return True

    def uncopy(self, fn):
        """Make each copy the rewrites left a mere name for the contribution where it may be."""
        self.facts(fn)
        for stmt in self.copies:
            if stmt.prim == "copy" and self.may_share(stmt):
                stmt.prim = "alias"

    def may_share(self, copy):
        """Whether the accumulator the statement ``copy`` assigns may simply name the
        contribution's memory: nothing else writes it, it is only read (no view of it escapes
        into a result or is written), and nothing writes the contribution's memory."""
        var, contribution = copy.target, copy.args[0]
        if any(stmt is not copy for stmt in self.writers.get(var, ())):
            return False
        if not self.only_read(var):
            return False
        written = set()
        for mutated in self.uses.mutated:
            written |= self.memory(mutated)
        return not self.memory(contribution) & written

    def only_read(self, var, depth=0):
        """Whether ``var``'s value is only read: not a result, and every view of it too."""
        if var in self.results or depth > 8:
            return False
        for stmt in self.readers.get(var, ()):
            if not isinstance(stmt, Assign) or stmt.inplace:
                return False
            if primitive(stmt.prim).has(Kind.VIEW) and not (
                    self.uses.defs.get(stmt.target) == 1 and stmt.target not in self.uses.mutated
                    and self.only_read(stmt.target, depth + 1)):
                return False
        return True

    def memory(self, atom):
        """The arrays whose memory ``atom`` may be (``ir/memory.memory_roots``: the ones it views,
        and for a result that may be its first argument, such as ``unbroadcast``'s, that
        argument's)."""
        return sharing({atom}, self.roots) if isinstance(atom, Var) else set()

    def owned_definition(self, block, zero_at, first, atom):
        """The position, between the zero fill and the accumulation, of the statement giving
        ``atom`` a new array that nothing but the accumulation reads; None if there is none."""
        between = _Span(self.position, zero_at, first)
        if not self.owned(atom, between):
            return None
        return self.position[id(self.definitions[atom][0])]

    def owned(self, atom, between):
        """Whether ``atom`` is a new array, computed by a statement in ``between`` (so each run
        of the accumulation has its own) and read only once. ``unbroadcast(g, v)`` is ``g``
        itself or a new array, so it is new if ``g`` is; ``g.T`` views only ``g``'s buffer."""
        if not isinstance(atom, Var) or atom in self.uses.params or atom in self.uses.mutated:
            return False
        definitions = self.definitions.get(atom, [])
        if len(definitions) != 1 or self.uses.reads.get(atom, 0) != 1 or id(definitions[0]) not in between:
            return False
        stmt = definitions[0]
        return _allocates(stmt) or (has_kind(stmt.prim, Kind.OWNED_LIKE_FIRST) and self.owned(stmt.args[0], between))


class _Span:
    """The ids of a block's statements strictly between two positions, as a container, looked up
    in the block's position index rather than built per query."""

    def __init__(self, position, start, end):
        self.position, self.start, self.end = position, start, end

    def __contains__(self, statement_id):
        return self.start < self.position.get(statement_id, -1) < self.end


def assign_first_contributions(fn):
    """Rewrite ``fn`` in place; returns True if anything changed."""
    rewriter = _FirstContributions(fn)
    rewriter.block(fn.body)
    if rewriter.copies:
        rewriter.uncopy(fn)
    return rewriter.changed
