"""Reading pytree arguments in compiled code: ``params["W1"]``, ``state.velocity``,
``params.items()``, at translation time.

A dict, namedtuple, dataclass or list argument is a ``TreeValue`` whose items are the IR
variables of its leaves (or inner TreeValues), so a subscript with a constant key, an
attribute of a record or ``len`` is resolved while translating and costs nothing at run time.
A key that is not constant, or missing, is a located error.
"""
from ...errors import TypeMismatchError, UnsupportedSyntaxError
from ..static_values import StaticStr
from ..values import TreeValue, TupleValue
from ...tree.registry import flatten_dict, node_type


def mapping_item(tr, base, key_value, node):
    """``params["W1"]``: the item of a dict argument under a constant string key."""
    if not isinstance(key_value, StaticStr):
        raise tr.error("a dict can only be indexed by a constant string key in compiled code "
                       "(params[\"W1\"]): its entries are separate arguments, chosen at compile time",
                       node, TypeMismatchError)
    key = key_value.value
    if key not in base.keys:
        known = ", ".join(repr(k) for k in base.keys) or "none"
        raise tr.error(f"KeyError: {key!r}: the dict passed here has the keys {known}", node, TypeMismatchError)
    return base.item(key)


def dict_literal(tr, node):
    """``{"loss": l, "grad": g}``: a dict with constant string keys, known at compile time (a
    dict where it is returned; its entries read with constant keys elsewhere)."""
    entries = {}
    for key_node, value_node in zip(node.keys, node.values):
        key = None if key_node is None else tr.expr(key_node)
        if not isinstance(key, StaticStr):
            raise tr.error("dict literals in compiled code need constant string keys ({\"loss\": l})",
                           key_node or node, UnsupportedSyntaxError)
        entries[key.value] = tr.expr(value_node)
    items, keys = flatten_dict(entries)
    return TreeValue(node_type({}), keys, items)


def field(tr, base, attr, node):
    """``state.velocity`` of a namedtuple or registered dataclass argument; ``d.items()`` and
    friends of a dict argument. None where ``attr`` is neither (the caller reports it)."""
    if base.has_fields and attr in base.keys:
        return base.item(attr)
    if base.is_mapping and attr in DictMethod.NAMES:
        return DictMethod(base, attr)
    return None


class DictMethod:
    """``params.items()``, ``.values()``, ``.keys()`` before the call: tuples known at compile
    time (the keys compile-time strings), which a ``for`` loop unrolls."""

    NAMES = ("items", "values", "keys")

    def __init__(self, mapping, name):
        self.mapping, self.name = mapping, name

    def compile_call(self, tr, args, kwargs, node):
        if args or kwargs:
            raise tr.error(f"dict.{self.name}() takes no arguments", node, UnsupportedSyntaxError)
        keys = [StaticStr(k) for k in self.mapping.keys]
        if self.name == "keys":
            return TupleValue(keys)
        if self.name == "values":
            return TupleValue(self.mapping.items)
        return TupleValue([TupleValue([k, v]) for k, v in zip(keys, self.mapping.items)])


def iteration_items(value):
    """What a ``for`` loop over ``value`` visits: a dict's keys (compile-time strings)."""
    if isinstance(value, TreeValue) and value.is_mapping:
        return [StaticStr(k) for k in value.keys]
    return value.items
