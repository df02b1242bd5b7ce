"""``define``: declare a primitive, once, with everything the compiler knows about it.

    define("tanh", float_of_first, "np.tanh(_0)", kinds=UNARY_FUNCTION,
           vjp=unary_vjp(lambda b, g, out, x: b.mul(g, b.sub(const(1.0), b.mul(out, out)))),
           arity=1, numpy=("tanh",), math=("tanh",))

Without an explicit ``jvp`` the forward rule follows from the declaration: ELEMENTWISE
primitives apply their reverse rule to the tangent, ``linear_in`` primitives apply themselves
to it, BILINEAR ones use the product rule (structural_jvp.py). The batch rule likewise follows
from the kinds for ELEMENTWISE and REDUCTION primitives; batching_rules.py holds the others.
"""
from .batching_rules import default_batch_rule
from .record import PRIMITIVES, Kind, Primitive
from .structural_jvp import bilinear_jvp, elementwise_jvp, linear_jvp

ELEMENTWISE, BROADCASTING, REDUCTION, VIEW = Kind.ELEMENTWISE, Kind.BROADCASTING, Kind.REDUCTION, Kind.VIEW
LINEAR, BILINEAR, NON_DIFFERENTIABLE = Kind.LINEAR, Kind.BILINEAR, Kind.NON_DIFFERENTIABLE
CHEAP_AND_SAFE, RECOMPUTABLE, NEVER_MERGED = Kind.CHEAP_AND_SAFE, Kind.RECOMPUTABLE, Kind.NEVER_MERGED
RULE_ONLY, BOOKKEEPING, CONSTANT_FOLDED = Kind.RULE_ONLY, Kind.BOOKKEEPING, Kind.CONSTANT_FOLDED
CHECK = Kind.CHECK

# The kinds of the common families.
UNARY_FUNCTION = {ELEMENTWISE}
BROADCASTING_FUNCTION = {ELEMENTWISE, BROADCASTING}
PIECEWISE_CONSTANT = {ELEMENTWISE, NON_DIFFERENTIABLE}
ALLOCATION = {NON_DIFFERENTIABLE, NEVER_MERGED}


def _structural_jvp(kinds, linear_in):
    if ELEMENTWISE in kinds:
        return elementwise_jvp
    if linear_in:
        return linear_jvp
    if BILINEAR in kinds:
        return bilinear_jvp
    return None


def define(name, type_rule, template, *, kinds=(), vjp=None, jvp=None, linear_in=(), shape_only=(),
           shape_of=None, arity=None, numpy=(), math=()):
    kinds = frozenset(kinds) | ({LINEAR} if linear_in else set())
    if jvp is None and (vjp is not None or linear_in):
        jvp = _structural_jvp(kinds, linear_in)
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name!r} is declared twice")
    PRIMITIVES[name] = Primitive(name, type_rule, template, kinds, vjp, jvp, linear_in, shape_only, shape_of,
                                 arity, tuple(numpy), tuple(math), default_batch_rule(name, kinds))
    return PRIMITIVES[name]
