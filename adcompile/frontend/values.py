"""Compile-time values of the frontend that are not IR atoms: tuples, ranges, None, slices."""


class TupleValue:
    """A Python tuple known at compile time (shapes, multiple return values, tuple literals)."""

    def __init__(self, items):
        self.items = list(items)


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
    """The shape of a returned tuple: a tuple with None per item and a tuple per inner tuple."""
    return tuple(nested_structure(item) if isinstance(item, TupleValue) else None for item in value.items)


def flat_items(value):
    """The items of a (nested) TupleValue, depth first."""
    for item in value.items:
        if isinstance(item, TupleValue):
            yield from flat_items(item)
        else:
            yield item


def regroup_results(structure, items):
    """The nested tuple of ``structure`` (``nested_structure``) holding ``items`` in order."""
    items = iter(items)

    def build(shape):
        return tuple(build(inner) if isinstance(inner, tuple) else next(items) for inner in shape)
    return build(structure)
