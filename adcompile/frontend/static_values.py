"""Compile-time values that are not numbers: strings.

A string (a literal, a default argument ``reduction="mean"``, a Module attribute
``self.activation``) is known when the function is compiled. It can be passed around,
compared with ``==``/``!=`` (the comparison folds to a constant, so ``if mode == "sum":``
picks a branch at compile time) and given to functions that dispatch on it.

A ``static_function`` runs at compile time on such values (and on ints and tuples): layers
use it to accept PyTorch's argument forms (``kernel_size=3`` or ``(3, 2)``).
"""
from ..errors import AdCompileError
from ..ir.builder import const
from ..ir.nodes import Const
from .extensions import register_classifier
from .values import NONE, TupleValue


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


class static_function:
    """A Python function that compiled code runs at compile time, on compile-time arguments
    (ints, floats, bools, strings, None and tuples of them), its result becoming a compile-time
    value: ``_pair(stride)`` turns ``2`` or ``(2, 1)`` into a pair while the function is being
    compiled (``nn/functional/conv.py``). Called from Python, it is the plain function."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    def __call__(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


class _CompileTimeCall:
    def __init__(self, function):
        self.function = function

    def compile_call(self, tr, args, kwargs, node):
        try:
            values = [_to_python(tr, a, node, self.function) for a in args]
            named = {k: _to_python(tr, v, node, self.function) for k, v in kwargs.items()}
            return _from_python(self.function.fn(*values, **named))
        except (ValueError, TypeError) as error:
            raise tr.error(f"{self.function.__name__}: {error}", node, AdCompileError) from None


def _to_python(tr, value, node, function):
    if isinstance(value, Const):
        return value.value
    if value is NONE:
        return None
    if isinstance(value, StaticStr):
        return value.value
    if isinstance(value, TupleValue):
        return tuple(_to_python(tr, item, node, function) for item in value.items)
    raise tr.error(f"{function.__name__}() takes values known when the function is compiled (ints, strings, "
                   "tuples of them: sizes, strides, paddings), not values computed at run time", node,
                   AdCompileError)


def _from_python(value):
    if value is None:
        return NONE
    if isinstance(value, str):
        return StaticStr(value)
    if isinstance(value, tuple):
        return TupleValue([_from_python(item) for item in value])
    return const(value)


@register_classifier
def _classify_function(value):
    return _CompileTimeCall(value) if isinstance(value, static_function) else None
