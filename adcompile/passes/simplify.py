"""Algebraic simplification and constant folding.

Rewrites, on every Assign:

    c1 op c2          -> the folded constant (numeric constants only; the arithmetic
                         primitives declaring ``fold=``, the predicates are constant_conditions.py's)
    x * 1, 1 * x, x / 1, x + 0, 0 + x, x - 0, x ** 1   -> x
    0 - x             -> -x
    -(-x)             -> x
    x * 0, 0 * x      -> 0 (a scalar) or zeros_like(x) (an array)
    mul_nz(0, x), div_nz(0, x) -> the same, exactly (zero-safe products are 0 for a zero g)
    (x * c1) * c2     -> x * (c1 * c2) for constants, c1 or c2 a power of two (exact: scaling by
                         a power of two commutes with rounding, and c1 * c2 is exact; away
                         from overflow and the subnormal range), so
                         ``dx * 0.5`` added to itself (``* 2.0``) is ``dx * 1.0``, and reverse
                         mode's ``2.0 * t * 100.0`` one product ``200.0 * t``

``x * 0 -> 0`` is not NaN-preserving: it gives 0 where x is inf or nan, as symbolic
differentiation usually does (a zero cotangent times anything contributes nothing).
Temporaries that become plain copies of another value are then replaced by that value; an
array ``x * 1`` that may not share ``x``'s memory (one of them is written in place) is
``x.copy()``.
"""
import math

from ..ir.builder import const
from ..ir.nodes import Assign, Const, Var, walk
from ..ir.primitives import primitive
from .uses import Uses, substitute_everywhere


def _number(atom):
    return isinstance(atom, Const) and isinstance(atom.value, (int, float)) and not isinstance(atom.value, bool)


def _is(atom, value):
    return _number(atom) and atom.value == value


def _power_of_two(atom):
    return _number(atom) and atom.value != 0 and math.frexp(atom.value)[0] in (0.5, -0.5)


def _zero_like(other, out_type):
    """(prim, args) of a zero of ``out_type``, the shape of ``other``'s (None if it may not be)."""
    if out_type.ndim == 0:
        return "alias", [const(0.0)]
    if isinstance(other, Var) and other.type.ndim == out_type.ndim:
        return "zeros_like", [other]
    return None


def _rewrite(stmt, definitions, stable):
    """(prim, args) that ``stmt`` simplifies to, or None. ``stable(atom)``: whether an operand
    of an earlier statement still holds the same value here, so that it may be read here."""
    prim, args = stmt.prim, stmt.args
    out_type = stmt.target.type
    spec = primitive(prim)
    if spec.fold is not None and not spec.is_predicate and all(_number(a) for a in args):
        try:
            value = spec.fold(*(a.value for a in args))
        except ZeroDivisionError:
            return None
        return "alias", [const(float(value) if out_type.is_float else value)]
    def same_type(a):
        return isinstance(a, Var) and a.type == out_type or (isinstance(a, Const) and out_type.ndim == 0)
    if prim == "mul":
        for keep, other in ((args[0], args[1]), (args[1], args[0])):
            if _is(other, 1) and same_type(keep):
                return "alias", [keep]
            if _is(other, 0) and out_type.is_float:
                return _zero_like(keep, out_type)
    if prim in ("mul_nz", "div_nz") and _is(args[0], 0) and out_type.is_float:
        return _zero_like(args[1], out_type)
    if prim == "mul":
        for inner_arg, scale in ((args[0], args[1]), (args[1], args[0])):
            inner = definitions.get(inner_arg) if isinstance(inner_arg, Var) else None
            if inner is not None and inner.prim == "mul" and _number(scale) and out_type.is_float:
                for x, c in ((inner.args[0], inner.args[1]), (inner.args[1], inner.args[0])):
                    if _number(c) and (_power_of_two(c) or _power_of_two(scale)) and isinstance(x, Var) \
                            and x.type == out_type and stable(x):
                        return "mul", [x, const(float(c.value) * scale.value)]
    if prim == "div" and _is(args[1], 1) and same_type(args[0]):
        return "alias", [args[0]]
    if prim == "add":
        for keep, other in ((args[0], args[1]), (args[1], args[0])):
            if _is(other, 0) and same_type(keep):
                return "alias", [keep]
    if prim == "add":
        for keep, other in ((args[0], args[1]), (args[1], args[0])):
            negated = definitions.get(other) if isinstance(other, Var) else None
            if negated is not None and negated.prim == "neg" and other.is_temp and stable(negated.args[0]):
                return "sub", [keep, negated.args[0]]
    if prim == "sub":
        if _is(args[1], 0) and same_type(args[0]):
            return "alias", [args[0]]
        if _is(args[0], 0) and isinstance(args[1], Var):
            return "neg", [args[1]]
    if prim == "pow" and _is(args[1], 1) and same_type(args[0]):
        return "alias", [args[0]]
    if prim == "neg" and isinstance(args[0], Var):
        inner = definitions.get(args[0])
        if inner is not None and inner.prim == "neg" and same_type(inner.args[0]) and stable(inner.args[0]):
            return "alias", [inner.args[0]]
        if inner is not None and inner.prim in ("mul", "div") and args[0].is_temp and all(map(stable, inner.args)):
            # -((-a) * b) -> a * b, the double negation that chained rules produce
            for k, operand in enumerate(inner.args):
                negated = definitions.get(operand) if isinstance(operand, Var) and operand.is_temp else None
                if negated is not None and negated.prim == "neg" and stable(negated.args[0]):
                    new_args = list(inner.args)
                    new_args[k] = negated.args[0]
                    return inner.prim, new_args
    return None


def _would_share_mutated_memory(stmt, rewritten, uses):
    """``out = x * 1`` is a new array; as ``out = x`` it would share x's memory, which matters
    if either is written in place."""
    prim, args = rewritten
    return (prim == "alias" and stmt.target.type.ndim > 0 and isinstance(args[0], Var)
            and (stmt.target in uses.mutated or args[0] in uses.mutated))


def simplify(fn):
    """Simplify ``fn`` in place; returns True if anything changed."""
    uses = Uses(fn, with_memory=True)
    definitions = {s.target: s for s in walk(fn.body) if isinstance(s, Assign) and uses.single_def(s.target)}
    unwritten, stable = uses.unwritten, uses.stable
    changed = False
    for stmt in walk(fn.body):
        if isinstance(stmt, Assign) and not stmt.inplace:
            rewritten = _rewrite(stmt, definitions, stable)
            if rewritten is not None and _would_share_mutated_memory(stmt, rewritten, uses):
                source = rewritten[1][0]
                rewritten = ("copy", [source]) if stmt.prim != "copy" and source.type == stmt.target.type else None
            if rewritten is not None:
                stmt.prim, stmt.args = rewritten
                stmt.params = {}
                changed = True
    copies = {}
    for stmt in walk(fn.body):
        if (isinstance(stmt, Assign) and stmt.prim == "alias" and stmt.target.is_temp
                and uses.single_def(stmt.target)):
            source = stmt.args[0]
            if isinstance(source, Const) or (uses.single_def(source) or source in uses.params) \
                    and unwritten(source) and uses.defs.get(source, 0) <= 1:
                copies[stmt.target] = source
    if copies:
        substitute_everywhere(fn, copies)
        changed = True
    return changed
