"""The primitive record and the table of all primitives.

A ``Primitive`` holds every fact the compiler needs about one op of the IR: how its result
type follows from its arguments' types, the Python/numba expression it is emitted as, its
kinds (what the passes and transforms may assume about it), its reverse and forward
derivative rules, its shape rule, its batch rule (for a batch of tangents at once), what the
lowering may do with it (a fill, a fused accumulator), how to fold it on constants, and the
numpy/math/scipy names (and numpy reductions) the frontend lowers onto it. The family modules
of this package declare them (``declare.define``); everyone else asks this table, never a name
set of its own.
"""
import enum
from dataclasses import dataclass
from functools import partial
from typing import Callable, Optional

from .type_rules import predicate


class Kind(enum.Enum):
    ELEMENTWISE = "elementwise: a diagonal Jacobian; the forward rule is the reverse rule applied to a tangent"
    BROADCASTING = "broadcasting: arguments broadcast against each other; cotangents are summed back to each"
    REDUCTION = "reduction: combines the elements of its first argument (all, or along one axis)"
    VIEW = "view: the array result may share memory with the first argument (numpy views)"
    LINEAR = "linear in the argument positions ``linear_in``: the forward rule applies the primitive to tangents"
    BILINEAR = "bilinear: the forward rule is the product rule"
    NON_DIFFERENTIABLE = "non-differentiable: piecewise constant, integer/bool-valued or shape-only; never active"
    CHEAP_AND_SAFE = "cheap and cannot raise: the right side of ``and``/``or`` may be evaluated eagerly"
    RECOMPUTABLE = "cheap enough that reverse mode recomputes a scalar result instead of saving it"
    NEVER_MERGED = "never merged by CSE: a fresh allocation (may be written to) or a deliberate alias"
    RULE_ONLY = "emitted by derivative rules (or reverse-mode bookkeeping) only, never by the frontend"
    BOOKKEEPING = "reverse-mode bookkeeping (tapes, placeholders, trip counts): not a computation on values"
    CHECK = "a run-time check that raises on arguments that do not fit: kept though nothing reads its result"
    RAISES = "always raises: emitted as ``raise <its expression>``, so that numba sees the branch end there"
    CONSTANT_FOLDED = "the frontend evaluates it on a constant argument with math.<name> at compile time"
    FRESH = "an array result is always a new array, never memory of an argument (buffer reuse may take it)"
    AXIS_VIEW = "may only place its first argument's elements along more axes: a fused loop reads it through that"
    PASSES_VALUES = "between equal shapes the result holds the first argument's values: a fused loop reads that"
    SHAPE_QUERY = "reads a length of its argument's shape (an int), never its values"
    INTEGER_DIVISION = "on integers a zero divisor raises in a scalar loop (numpy's arrays give 0): never fused there"
    NEW_FROM_SHAPE = "a new array made from lengths (or an argument's shape) and at most a fill value: cheap to move"
    AXIS_LENGTHS = "its arguments are its result's axis lengths, one per axis (zeros(n, m)): a batch is one more length"
    COMMUTATIVE = "its two arguments may be swapped for exactly the same value: CSE merges ``0.5 * x`` and ``x * 0.5``"
    SCALING = "scales its first argument by its second, element by element (x * c, x / c): a chain is one coefficient"
    ADDITIVE = "adds or subtracts its two arguments, element by element: two scalings of one value are a scaling of it"
    OWNED_RESULT = "an array result is a new array its target alone owns (x + y, -x, x @ y): an accumulator may be it"
    OWNED_LIKE_FIRST = "its array result is its first argument's whole buffer or a new array: owned if that is"
    C_ORDERED_RESULT = "numba types its array result 'C'-ordered whatever its operands' layouts"
    LAYOUT_LIKE_FIRST = "a new array of its first argument's layout if 'C' or 'F', else 'C' (numba's empty_like)"
    ONE_DTYPE_OPERANDS = "numba runs it on operands of one float dtype only (LAPACK): the Builder casts them to it"
    INLINE_ARITHMETIC = "numba compiles it on scalars to arithmetic, no call or branch: a loop of it may vectorise"


@dataclass(frozen=True)
class Accumulator:
    """How a fused loop computes a reduction: an accumulator that starts at ``start`` and takes
    each element by the primitive ``step`` (None: by addition)."""
    start: float
    step: Optional[str] = None


ALL_ARGUMENTS = "all"  # ``linear_in`` of a primitive linear in every argument (concatenate, stack)


@dataclass(frozen=True)
class Primitive:
    name: str
    type_rule: Callable  # (arg types, params[, const flags]) -> Type
    template: object  # str, or callable (arg types, params) -> str; ``_0`` ... are the arguments
    kinds: frozenset = frozenset()
    # vjp(b, g, out, args, params, active) -> [cotangent, ScatterInto or None per argument]
    vjp: Optional[Callable] = None
    # jvp(b, tangents, out, args, params, prim_name) -> tangent atom or None (see structural_jvp.py)
    jvp: Optional[Callable] = None
    linear_in: object = ()  # argument positions (negative from the end) or ALL_ARGUMENTS
    shape_only: tuple = ()  # argument positions read for their shape or dtype only, not values
    # argument positions read as values but not differentiated: the result depends on them only
    # through another argument, whose rule accounts for it (numeric/logistic.py)
    not_differentiated: tuple = ()
    shape_of: Optional[int] = None  # the argument whose shape an array result always has
    arity: Optional[int] = None  # number of arguments of the numpy/math functions below
    numpy_names: tuple = ()  # np.<name>(...) is exactly this primitive
    math_names: tuple = ()  # math.<name>(...) is exactly this primitive
    scipy_names: tuple = ()  # scipy.special.<name>(x) is exactly this (unary) primitive
    # np.<name>(a, axis, keepdims) and a.<name>(...) are this reduction, applied one axis at a time
    reduction_names: tuple = ()
    # batch(b, args, batched, params, size) -> result with a trailing batch axis, or None (batching_rules.py)
    batch: Optional[Callable] = None
    # shape(shapes, args, params) -> the result's tuple of Dim, or None when unknown (shape_rules.py)
    shape: Optional[Callable] = None
    fill: Optional[float] = None  # the value every element of the result holds (zeros_like: 0)
    accumulator: Optional[Accumulator] = None  # how a fused loop reduces with it (sum, max, a dot)
    # fold(*values) -> its value on constant Python operands (constant folding; operator.add for add)
    fold: Optional[Callable] = None

    def has(self, kind):
        return kind in self.kinds

    @property
    def is_differentiable(self):
        return Kind.NON_DIFFERENTIABLE not in self.kinds

    @property
    def is_predicate(self):
        """Whether its result is a truth value whatever its arguments (comparisons, not/and/or)."""
        return self.type_rule is predicate

    @property
    def forward_rule(self):
        """``rule(b, tangents, out, args, params) -> tangent``, or None without a derivative."""
        if not self.is_differentiable or self.jvp is None:
            return None
        return partial(_apply_jvp, self.jvp, self.name)

    def value_args(self, args):
        """The arguments whose values (not only shapes) the primitive reads."""
        return [a for k, a in enumerate(args) if k not in self.shape_only]

    def differentiated_args(self, args):
        """The arguments a derivative flows from into the result."""
        return [a for k, a in enumerate(args) if k not in self.shape_only and k not in self.not_differentiated]


def _apply_jvp(jvp, name, b, tangents, out, args, params):
    return jvp(b, tangents, out, args, params, name)


PRIMITIVES = {}


def primitive(name):
    """The record of primitive ``name``; a KeyError naming it if there is none."""
    try:
        return PRIMITIVES[name]
    except KeyError:
        raise KeyError(f"unknown primitive {name!r}") from None


def has_kind(name, kind):
    """Whether primitive ``name`` is of ``kind`` (False for unknown names)."""
    spec = PRIMITIVES.get(name)
    return spec is not None and kind in spec.kinds


def names_of_kind(kind):
    return frozenset(name for name, spec in PRIMITIVES.items() if kind in spec.kinds)


def result_type(prim, arg_types, params, consts=None):
    """The type of ``prim``'s result for arguments of ``arg_types`` (``consts``: which are constants)."""
    spec = primitive(prim)
    try:
        return spec.type_rule(arg_types, params, consts)
    except TypeError:
        return spec.type_rule(arg_types, params)
