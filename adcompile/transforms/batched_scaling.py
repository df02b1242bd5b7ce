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
from ..ir.types import Type

_SCALINGS = ("mul", "mul_nz", "div", "div_nz")  # batched value first, coefficient second (mul: either)
_SUMS = ("add", "sub")


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


class _Chains:
    def __init__(self, fn, batched, namer):
        self.batched, self.namer = batched, namer
        self.unsafe = _unsafe(fn)
        self.products = []  # the statements assigning a base times its coefficient

    def block(self, block):
        out = []
        scaled = {}  # batched Var -> (base, coefficient or None for 1, steps from the base)
        assigned_here = {stmt.target for stmt in block if isinstance(stmt, Assign)}
        seen = set()
        for stmt in block:
            for inner in stmt.blocks():
                inner[:] = self.block(inner)
            chain = None
            if isinstance(stmt, Assign):
                bases = {a for a in stmt.args if isinstance(a, Var) and (a in seen or a not in assigned_here)}
                chain = self.link(stmt, scaled, bases, Builder(self.namer, out, stmt.loc))
            if isinstance(stmt, Assign):
                seen.add(stmt.target)
            if chain is None:
                out.append(stmt)
                continue
            scaled[stmt.target] = chain
            base, coefficient, steps = chain
            if steps < 2:
                out.append(stmt)
                continue
            out.append(Assign(stmt.target, "mul_nz", [base, coefficient], loc=stmt.loc))
            self.products.append(out[-1])
        return out

    def constant(self, atom):
        """Whether ``atom`` is the same for every member (a float, not batched)."""
        return isinstance(atom, Const) or (atom not in self.batched and atom.type.is_float)

    def scale_of(self, atom, scaled, bases):
        """(base, coefficient, steps) of batched ``atom``: a link of a chain, or a chain's start."""
        if atom in scaled:
            return scaled[atom]
        usable = isinstance(atom, Var) and atom in self.batched and atom not in self.unsafe and atom in bases
        return (atom, None, 0) if usable else None

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
            base, coefficient, steps = links[0]
            if stmt.prim == "copy":
                return links[0]
            return base, b.neg(one if coefficient is None else coefficient), steps + 1
        if stmt.prim in _SCALINGS and links[0] is not None and self.constant(args[1]):
            base, coefficient, steps = links[0]
            if coefficient is None and stmt.prim in ("mul", "mul_nz"):
                return base, args[1], steps + 1
            scaling = b.mul if stmt.prim == "mul" else (lambda p, q: b.call(stmt.prim, p, q))
            return base, scaling(one if coefficient is None else coefficient, args[1]), steps + 1
        if stmt.prim == "mul" and links[1] is not None and self.constant(args[0]):
            base, coefficient, steps = links[1]
            return base, args[0] if coefficient is None else b.mul(args[0], coefficient), steps + 1
        if stmt.prim in _SUMS and None not in links and links[0][0] is links[1][0]:
            (base, first, steps_first), (_, second, steps_second) = links
            coefficients = [one if c is None else c for c in (first, second)]
            total = b.add(*coefficients) if stmt.prim == "add" else b.sub(*coefficients)
            return base, total, max(steps_first, steps_second) + 1
        return None


def factor_batched_scalings(fn, batched, namer):
    """Rewrite the batched function ``fn`` (``batched``: its batched Vars) in place as above."""
    chains = _Chains(fn, batched, namer)
    fn.body = chains.block(fn.body)
    read = set(vars_read(fn.body)) | {atom for atom in fn.results if isinstance(atom, Var)}
    for product in chains.products:
        coefficient = product.args[1]
        if product.target in read and isinstance(coefficient, Var) and coefficient.is_temp:
            # its own line: inlined into the product, it would be computed for every member
            coefficient.name, coefficient.is_temp = namer.fresh(product.target.name + "_scale"), False
    return fn
