"""Compile-time values that are not numbers: strings.

A string (a literal, a default argument ``reduction="mean"``, a Module attribute
``self.activation``) is known when the function is compiled. It can be passed around,
compared with ``==``/``!=`` (the comparison folds to a constant, so ``if mode == "sum":``
picks a branch at compile time) and given to functions that dispatch on it.
"""
from .extensions import register_classifier


class StaticStr:
    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return repr(self.value)


@register_classifier
def _classify(value):
    return StaticStr(value) if isinstance(value, str) else None


def static_compare(op_name, left, right):
    """The folded result of ``left <op> right`` where one side is a StaticStr, or None if the
    comparison is not one between compile-time strings."""
    if not (isinstance(left, StaticStr) or isinstance(right, StaticStr)):
        return None
    a = left.value if isinstance(left, StaticStr) else left
    b = right.value if isinstance(right, StaticStr) else right
    if op_name == "Eq":
        return isinstance(a, str) and isinstance(b, str) and a == b
    if op_name == "NotEq":
        return not (isinstance(a, str) and isinstance(b, str) and a == b)
    return None
