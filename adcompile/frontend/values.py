"""Compile-time values of the frontend that are not IR atoms: tuples, pytree nodes (lists,
dicts, namedtuples, registered classes), ranges, None, slices."""
from ..tree.registry import node_type
from ..tree.structure import LEAF, TreeDef


class TupleValue:
    """A Python tuple known at compile time (shapes, multiple return values, tuple literals)."""

    def __init__(self, items):
        self.items = list(items)

    def like(self, items):
        """A value of this kind holding ``items`` instead (the same keys for a dict)."""
        return TupleValue(items)


class TreeValue(TupleValue):
    """A pytree node other than a tuple known at compile time: a list literal, or a list,
    dict, namedtuple or registered class passed as an argument (flattened to its leaves at the
    call, ``module_compiler/tree_slots.py``). ``node`` and ``aux`` are its ``adcompile.tree``
    node type and static data; ``keys`` name its items (dict keys, field names, positions),
    which ``items`` hold in flattening order (a dict's keys sorted)."""

    def __init__(self, node, aux, items):
        super().__init__(items)
        self.node, self.aux = node, aux
        self.keys = list(node.keys(aux, len(self.items)))

    def like(self, items):
        return TreeValue(self.node, self.aux, items)

    @property
    def is_mapping(self):
        return issubclass(self.node.cls, dict)

    @property
    def has_fields(self):
        """A namedtuple or a dataclass: items are read as attributes."""
        return not self.is_mapping and all(isinstance(key, str) for key in self.keys) and bool(self.keys)

    def item(self, key):
        """The item under ``key`` (a dict key or a field name), or raise KeyError."""
        return self.items[self.keys.index(key)]


def list_value(items):
    """A list literal ``[a, b]``: a list where it is returned, a tuple elsewhere."""
    return TreeValue(node_type([]), None, items)


class RangeValue:
    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


class EnumerateValue:
    def __init__(self, inner):
        self.inner = inner


class ZipValue:
    def __init__(self, inners):
        self.inners = inners


class ReversedValue:
    def __init__(self, inner):
        self.inner = inner


class NoneValue:
    pass


NONE = NoneValue()


class MethodRef:
    """``x.sum`` before it is called: the receiver and the method name."""

    def __init__(self, receiver, name):
        self.receiver, self.name = receiver, name


def refers_to(value, var):
    """Whether the compile-time value ``value`` is ``var`` or holds it (in a tuple, range,
    enumerate or zip)."""
    if value is var:
        return True
    if isinstance(value, TupleValue):
        return any(refers_to(item, var) for item in value.items)
    if isinstance(value, RangeValue):
        return any(part is var for part in (value.start, value.stop, value.step))
    if isinstance(value, (EnumerateValue, ReversedValue)):
        return refers_to(value.inner, var)
    if isinstance(value, ZipValue):
        return any(refers_to(inner, var) for inner in value.inners)
    return False


def nested_structure(value):
    """The ``adcompile.tree.TreeDef`` of a returned tuple, list or dict of atoms."""
    if isinstance(value, TreeValue):
        node, aux = value.node, value.aux
    elif isinstance(value, TupleValue):
        node, aux = node_type(()), None
    else:
        return LEAF
    return TreeDef(node, aux, [nested_structure(item) for item in value.items])


def is_flat_tuple(structure):
    """Whether ``structure`` (``nested_structure``) is a tuple of leaves: returned as it is."""
    return structure.node is node_type(()) and all(child.is_leaf for child in structure.children)


def value_of_structure(structure, items):
    """The frontend value of ``structure`` holding the atoms ``items`` (an inlined call's result)."""
    items = iter(items)

    def build(shape):
        if shape.is_leaf:
            return next(items)
        children = [build(child) for child in shape.children]
        if shape.node is node_type(()):
            return TupleValue(children)
        return TreeValue(shape.node, shape.aux, children)
    return build(structure)


def flat_items(value):
    """The items of a (nested) TupleValue, depth first."""
    for item in value.items:
        if isinstance(item, TupleValue):
            yield from flat_items(item)
        else:
            yield item


def regroup_results(structure, items):
    """The tuple, list or dict of ``structure`` (``nested_structure``) holding ``items`` in order."""
    return structure.unflatten(items)
