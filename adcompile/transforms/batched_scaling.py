"""Batched chains of scalings computed on the coefficients, once per member-independent value.

In a batched jvp (a Hessian's or a forward Jacobian's columns) most tangent statements
multiply a batched value by a coefficient that is the same for every member (``x[:, None]``,
a scalar): the chain

    dt_1 = dt * _t_6                    # dt: (m, batch), _t_6: (m, 1)
    dt_10 = -rt.mul_nz(rt.div_nz(dt_1, _t_22), _t_24)
    dt_11 = dt_10 * _t_6 + dt_1 * _t_24

runs every operation on all m * batch elements. Each value of such a chain is ``dt``
times a coefficient, which is computed once on the (m, 1) arrays instead:

    dt_11_scale = -rt.mul_nz(rt.div_nz(_t_6, _t_22), _t_24) * _t_6 + _t_6 * _t_24
    dt_11 = rt.mul_nz(dt, dt_11_scale)

(for the Hessian of ``sum(log(1 + exp(A @ x)))`` this is the hand-written
``A * (s * (1 - s))[:, None]``). A value two or more steps from its base is assigned as the
base times its coefficient; the values between become unused and dead-code elimination
removes them. A coefficient a kept product reads gets a line of its own (the code generator
would otherwise inline it into the product and compute it per element). The product is zero-safe (``mul_nz``): a member whose tangent is zero gets zero,
as the linearity of a jvp says, where the chain could have met ``0 * inf``. Only the
rounding of the products changes otherwise (they are associated differently).
"""
from ..ir.builder import Builder
from ..ir.memory import memory_roots, sharing
from ..ir.nodes import Assign, Const, Var, const, vars_read, walk
from ..ir.primitives import Kind, has_kind
from ..ir.primitives.batching_rules import with_unit_batch_axis
from ..ir.types import Type
from ..ir.indexing import FULL_SLICE


def _unsafe(fn):
    """Vars whose value may change after their assignment: assigned twice, written in place
    (or popped), or sharing memory with such. A chain reads its base later than the
    statements it replaces did, so the base must be none of these."""
    assignments = {param: 1 for param in fn.params}
    written = set()
    for stmt in walk(fn.body):
        for var in stmt.writes():
            if isinstance(stmt, Assign) and not stmt.inplace:
                assignments[var] = assignments.get(var, 0) + 1
            else:
                written.add(var)
    roots = memory_roots(fn.body, fn.params)
    changing = sharing(written | {var for var, n in assignments.items() if n > 1}, roots)
    return changing | {var for var, var_roots in roots.items() if var_roots & changing}




def _unit_axis_views(fn, unsafe):
    """``{v: u}`` for the views ``v = u[..., None]`` the batching gives member-independent
    arrays: a coefficient is computed on ``u`` (m values, not an (m, 1) array expression)."""
    views = {}
    for stmt in walk(fn.body):
        if (isinstance(stmt, Assign) and stmt.prim == "getitem" and isinstance(stmt.args[0], Var)
                and stmt.target not in unsafe and stmt.args[0] not in unsafe):
            items = list(stmt.params.get("items", ()))
            if items == [FULL_SLICE] * stmt.args[0].type.ndim + [("none",)] and len(stmt.args) == 1:
                views[stmt.target] = stmt.args[0]
    return views


class _Chains:
    """A coefficient is (atom or None for 1, expanded): ``expanded`` True when the coefficient
    is ``atom[..., None]``, False when it is ``atom``, None when either (a scalar)."""

    def __init__(self, fn, batched, namer):
        self.batched, self.namer = batched, namer
        self.unsafe = _unsafe(fn)
        self.views = _unit_axis_views(fn, self.unsafe)
        self.products = []  # (statement assigning a base times its coefficient, the coefficient)

    def block(self, block):
        out = []
        scaled = {}  # batched Var -> (base, coefficient, steps from the base)
        assigned_here = {stmt.target for stmt in block if isinstance(stmt, Assign)}
        seen = set()
        for stmt in block:
            for inner in stmt.blocks():
                inner[:] = self.block(inner)
            chain = None
            if isinstance(stmt, Assign):
                bases = {a for a in stmt.args if isinstance(a, Var) and (a in seen or a not in assigned_here)}
                chain = self.link(stmt, scaled, bases, Builder(self.namer, out, stmt.loc))
                seen.add(stmt.target)
            if chain is None:
                out.append(stmt)
                continue
            scaled[stmt.target] = chain
            base, (coefficient, expanded), steps = chain
            if steps < 2:
                out.append(stmt)
                continue
            b = Builder(self.namer, out, stmt.loc)
            factor = with_unit_batch_axis(b, coefficient) if expanded else coefficient
            out.append(Assign(stmt.target, "mul_nz", [base, factor], loc=stmt.loc))
            self.products.append((out[-1], coefficient))
        return out

    def coefficient(self, atom):
        """The coefficient that the member-independent argument ``atom`` is."""
        if atom in self.views:
            return self.views[atom], True
        return atom, None if isinstance(atom, Const) or not atom.type.ndim else False

    def constant(self, atom):
        """Whether ``atom`` is the same for every member (a float, not batched)."""
        return isinstance(atom, Const) or (atom not in self.batched and atom.type.is_float)

    def scale_of(self, atom, scaled, bases):
        """(base, coefficient, steps) of batched ``atom``: a link of a chain, or a chain's start."""
        if atom in scaled:
            return scaled[atom]
        usable = isinstance(atom, Var) and atom in self.batched and atom not in self.unsafe and atom in bases
        return (atom, (None, None), 0) if usable else None

    @staticmethod
    def combine(b, operation, first, second, one):
        """``operation`` of two coefficients; one of an (m, 1) and an (m,) form is expanded."""
        (p, p_expanded), (q, q_expanded) = first, second
        if None not in (p_expanded, q_expanded) and p_expanded != q_expanded:
            if p_expanded:
                p, p_expanded = with_unit_batch_axis(b, p), False
            else:
                q, q_expanded = with_unit_batch_axis(b, q), False
        value = operation(one if p is None else p, one if q is None else q)
        return value, p_expanded if p_expanded is not None else q_expanded

    def link(self, stmt, scaled, bases, b):
        """(base, coefficient, steps) of ``stmt``'s target as a scaling of a batched value
        (the coefficient's statements appended to ``b``), or None."""
        target, args = stmt.target, stmt.args
        if (stmt.inplace or target not in self.batched or target in self.unsafe or not target.type.is_float
                or any(isinstance(a, Var) and a.type.dtype != target.type.dtype for a in args)):
            return None
        one = const(1.0, Type(target.type.dtype))
        links = [self.scale_of(a, scaled, bases) for a in args]
        if stmt.prim in ("copy", "neg") and links[0] is not None:
            base, (coefficient, expanded), steps = links[0]
            if stmt.prim == "copy":
                return links[0]
            return base, (b.neg(one if coefficient is None else coefficient), expanded), steps + 1
        # a SCALING takes the batched value first, the coefficient second (mul: either)
        if has_kind(stmt.prim, Kind.SCALING) and links[0] is not None and self.constant(args[1]):
            base, coefficient, steps = links[0]
            if coefficient[0] is None and stmt.prim in ("mul", "mul_nz"):
                return base, self.coefficient(args[1]), steps + 1
            scaling = b.mul if stmt.prim == "mul" else (lambda p, q: b.call(stmt.prim, p, q))
            return base, self.combine(b, scaling, coefficient, self.coefficient(args[1]), one), steps + 1
        if stmt.prim == "mul" and links[1] is not None and self.constant(args[0]):
            base, coefficient, steps = links[1]
            return base, self.combine(b, b.mul, self.coefficient(args[0]), coefficient, one), steps + 1
        if has_kind(stmt.prim, Kind.ADDITIVE) and None not in links and links[0][0] is links[1][0]:
            (base, first, steps_first), (_, second, steps_second) = links
            total = self.combine(b, b.add if stmt.prim == "add" else b.sub, first, second, one)
            return base, total, max(steps_first, steps_second) + 1
        return None


def factor_batched_scalings(fn, batched, namer):
    """Rewrite the batched function ``fn`` (``batched``: its batched Vars) in place as above."""
    chains = _Chains(fn, batched, namer)
    fn.body = chains.block(fn.body)
    read = set(vars_read(fn.body)) | {atom for atom in fn.results if isinstance(atom, Var)}
    for product, coefficient in chains.products:
        if product.target in read and isinstance(coefficient, Var) and coefficient.is_temp:
            # its own line: inlined into the product, it would be computed for every member
            coefficient.name, coefficient.is_temp = namer.fresh(product.target.name + "_scale"), False
    return fn
