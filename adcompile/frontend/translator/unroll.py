"""``for`` loops over compile-time sequences, unrolled: ``for layer in self.layers:``.

A loop over a tuple known at compile time (a tuple literal, the submodules of a Sequential or
ModuleList, ``enumerate`` of either) has a fixed number of iterations, and its items may be
values that exist only at compile time (modules). The body is translated once per item, in
order, as straight-line code.
"""
from ...errors import UnsupportedSyntaxError
from ...ir.builder import const
from ..values import EnumerateValue, TupleValue


def is_static_sequence(iterable):
    if isinstance(iterable, EnumerateValue):
        iterable = iterable.inner
    return isinstance(iterable, TupleValue) and not getattr(iterable, "runtime", False)


def unroll_for(tr, node, iterable):
    if node.orelse or getattr(node, "stop_flags", None):
        raise tr.error("break, return and else are not supported in a for loop over a tuple or over "
                       "modules (it is unrolled at compile time)", node, UnsupportedSyntaxError)
    enumerate_ = isinstance(iterable, EnumerateValue)
    items = (iterable.inner if enumerate_ else iterable).items
    for k, item in enumerate(items):
        value = TupleValue([const(k), item]) if enumerate_ else item
        tr.assign(node.target, value, node)
        tr.statements(node.body)
