"""``for`` loops over compile-time sequences, unrolled: ``for layer in self.layers:``.

A loop over a tuple known at compile time (a tuple literal, the submodules of a Sequential or
ModuleList, a list or dict argument -- a dict's keys --, ``params.items()``, ``enumerate`` of
any) has a fixed number of iterations, and its items may be values that exist only at compile
time (modules, dict keys). The body is translated once per item, in order, as straight-line code.
"""
import ast

from ...errors import UnsupportedSyntaxError
from ...ir.builder import const
from ..static_values import StaticStr
from ..values import EnumerateValue, TupleValue
from .tree_access import iteration_items


def is_static_sequence(iterable):
    if isinstance(iterable, EnumerateValue):
        iterable = iterable.inner
    return isinstance(iterable, TupleValue) and not getattr(iterable, "runtime", False)


def unroll_for(tr, node, iterable):
    if node.orelse or getattr(node, "stop_flags", None):
        raise tr.error("break, return and else are not supported in a for loop over a tuple or over "
                       "modules (it is unrolled at compile time)", node, UnsupportedSyntaxError)
    enumerate_ = isinstance(iterable, EnumerateValue)
    items = iteration_items(iterable.inner if enumerate_ else iterable)
    for k, item in enumerate(items):
        value = TupleValue([const(k), item]) if enumerate_ else item
        _assign(tr, node.target, value, node)
        tr.statements(node.body)


def _assign(tr, target, value, node):
    """The loop target bound to one item; a dict key (a compile-time string) is bound as it is."""
    if isinstance(target, ast.Name) and isinstance(value, StaticStr):
        tr.env[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, TupleValue) \
            and len(target.elts) == len(value.items) and any(isinstance(v, StaticStr) for v in value.items):
        for t, v in zip(target.elts, value.items):
            _assign(tr, t, v, node)
    else:
        tr.assign(target, value, node)
