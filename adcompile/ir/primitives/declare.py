"""``define``: declare a primitive, once, with everything the compiler knows about it.

    define("tanh", float_of_first, "np.tanh(_0)", kinds=UNARY_FUNCTION,
           vjp=unary_vjp(lambda b, g, out, x: b.mul(g, b.sub(const(1.0), b.mul(out, out)))),
           arity=1, numpy=("tanh",), math=("tanh",))

Without an explicit ``jvp`` the forward rule follows from the declaration: ELEMENTWISE
primitives apply their reverse rule to the tangent, ``linear_in`` primitives apply themselves
to it, BILINEAR ones use the product rule (structural_jvp.py). The batch rule likewise follows
from the kinds for ELEMENTWISE and REDUCTION primitives, and the shape rule from ``shape_of``
and the ELEMENTWISE, BROADCASTING and REDUCTION kinds; any other primitive passes ``shape=``
and ``batch=`` (the shared rules are in shape_rules.py and batching_rules.py).
"""
from .batching_rules import default_batch_rule
from .record import PRIMITIVES, Accumulator, Kind, Primitive  # noqa: F401  (Accumulator: for the families)
from .shape_rules import derived_shape_rule
from .structural_jvp import bilinear_jvp, elementwise_jvp, linear_jvp

ELEMENTWISE, BROADCASTING, REDUCTION, VIEW = Kind.ELEMENTWISE, Kind.BROADCASTING, Kind.REDUCTION, Kind.VIEW
LINEAR, BILINEAR, NON_DIFFERENTIABLE = Kind.LINEAR, Kind.BILINEAR, Kind.NON_DIFFERENTIABLE
CHEAP_AND_SAFE, RECOMPUTABLE, NEVER_MERGED = Kind.CHEAP_AND_SAFE, Kind.RECOMPUTABLE, Kind.NEVER_MERGED
RULE_ONLY, BOOKKEEPING, CONSTANT_FOLDED = Kind.RULE_ONLY, Kind.BOOKKEEPING, Kind.CONSTANT_FOLDED
CHECK, FRESH, AXIS_VIEW, PASSES_VALUES = Kind.CHECK, Kind.FRESH, Kind.AXIS_VIEW, Kind.PASSES_VALUES
RAISES = Kind.RAISES
SHAPE_QUERY, INTEGER_DIVISION, NEW_FROM_SHAPE = Kind.SHAPE_QUERY, Kind.INTEGER_DIVISION, Kind.NEW_FROM_SHAPE
AXIS_LENGTHS, COMMUTATIVE, SCALING, ADDITIVE = Kind.AXIS_LENGTHS, Kind.COMMUTATIVE, Kind.SCALING, Kind.ADDITIVE
OWNED_RESULT, OWNED_LIKE_FIRST = Kind.OWNED_RESULT, Kind.OWNED_LIKE_FIRST
C_ORDERED_RESULT, LAYOUT_LIKE_FIRST = Kind.C_ORDERED_RESULT, Kind.LAYOUT_LIKE_FIRST
ONE_DTYPE_OPERANDS, INLINE_ARITHMETIC = Kind.ONE_DTYPE_OPERANDS, Kind.INLINE_ARITHMETIC

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
           not_differentiated=(), shape_of=None, shape=None, batch=None, arity=None, numpy=(), math=(), scipy=(),
           reduces=(),
           fill=None, accumulator=None, fold=None):
    """Declare primitive ``name`` (see ``record.Primitive`` for each field); the forward rule,
    the shape rule and the batch rule default to what the kinds imply."""
    kinds = frozenset(kinds) | ({LINEAR} if linear_in else set())
    if jvp is None and (vjp is not None or linear_in):
        jvp = _structural_jvp(kinds, linear_in)
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name!r} is declared twice")
    PRIMITIVES[name] = Primitive(
        name, type_rule, template, kinds, vjp=vjp, jvp=jvp, linear_in=linear_in, shape_only=shape_only,
        not_differentiated=not_differentiated,
        shape_of=shape_of, arity=arity, numpy_names=tuple(numpy), math_names=tuple(math),
        scipy_names=tuple(scipy), reduction_names=tuple(reduces),
        batch=batch or default_batch_rule(name, kinds), shape=shape or derived_shape_rule(kinds, shape_of),
        fill=fill, accumulator=accumulator, fold=fold)
    return PRIMITIVES[name]
