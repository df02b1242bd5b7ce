"""Which Python types are pytree nodes, and how each one is taken apart and put back together.

A node type has ``flatten(obj) -> (children, aux)`` and ``unflatten(aux, children) -> obj``:
``children`` a sequence of subtrees, ``aux`` hashable static data (the keys of a dict, the
field names of a namedtuple). Built in: tuple, list, dict (keys sorted, as JAX sorts them),
OrderedDict and defaultdict (keys in insertion order), namedtuples and None (a node with no
children). Everything else is a leaf unless registered with :func:`register`.
"""
import collections
import dataclasses

from ..errors import CallError


class NodeType:
    """How one registered type is flattened: ``flatten(obj) -> (children, aux)``,
    ``unflatten(aux, children) -> obj``; ``keys(aux, n)`` names the children in paths."""

    def __init__(self, cls, flatten, unflatten, keys=None, name=None):
        self.cls = cls
        self.flatten = flatten
        self.unflatten = unflatten
        self.keys = keys or (lambda aux, n: list(range(n)))
        self.name = name or cls.__name__

    def __repr__(self):
        return f"<pytree node {self.name}>"


def _sorted_keys(d):
    keys = list(d)
    try:
        return sorted(keys)
    except TypeError:  # keys of mixed types: ordered by type name, then value, deterministically
        return sorted(keys, key=lambda k: (type(k).__name__, repr(k)))


def flatten_dict(d):
    keys = tuple(_sorted_keys(d))
    return [d[k] for k in keys], keys


def _flatten_ordered(d):
    keys = tuple(d)
    return [d[k] for k in keys], keys


def _flatten_defaultdict(d):
    keys = tuple(d)
    return [d[k] for k in keys], (d.default_factory, keys)


_NODES = {
    tuple: NodeType(tuple, lambda t: (list(t), None), lambda aux, ch: tuple(ch)),
    list: NodeType(list, lambda t: (list(t), None), lambda aux, ch: list(ch)),
    dict: NodeType(dict, flatten_dict, lambda keys, ch: dict(zip(keys, ch)), keys=lambda keys, n: list(keys)),
    collections.OrderedDict: NodeType(collections.OrderedDict, _flatten_ordered,
                                      lambda keys, ch: collections.OrderedDict(zip(keys, ch)),
                                      keys=lambda keys, n: list(keys)),
    collections.defaultdict: NodeType(collections.defaultdict, _flatten_defaultdict,
                                      lambda aux, ch: collections.defaultdict(aux[0], zip(aux[1], ch)),
                                      keys=lambda aux, n: list(aux[1])),
    type(None): NodeType(type(None), lambda t: ([], None), lambda aux, ch: None, name="None"),
}


def _namedtuple_node(cls):
    return NodeType(cls, lambda t: (list(t), None), lambda aux, ch: cls(*ch),
                    keys=lambda aux, n: list(cls._fields))


_LEAF_TYPES = set()  # types seen to be leaves (register removes its class)


def node_type(value):
    """The NodeType of ``value``'s type, or None for a leaf."""
    cls = type(value)
    node = _NODES.get(cls)
    if node is None and cls not in _LEAF_TYPES:
        if issubclass(cls, tuple) and hasattr(cls, "_fields"):  # a namedtuple
            node = _NODES[cls] = _namedtuple_node(cls)
        else:
            _LEAF_TYPES.add(cls)
    return node


def register(cls, flatten=None, unflatten=None, *, data_fields=None, meta_fields=None):
    """Make instances of ``cls`` pytree nodes.

    ``register(cls, flatten, unflatten)``: ``flatten(obj) -> (children, aux)`` with ``aux``
    hashable, ``unflatten(aux, children) -> obj`` (JAX's ``register_pytree_node``).
    ``register(DataClass)``: the dataclass's fields are its children; ``data_fields=`` and
    ``meta_fields=`` split them into children and static data (JAX's ``register_dataclass``).
    Usable as a class decorator. Returns ``cls``.
    """
    if not isinstance(cls, type):
        raise CallError(f"adcompile.tree.register takes a class, not {cls!r}")
    if flatten is None and unflatten is None:
        if not dataclasses.is_dataclass(cls):
            raise CallError(f"adcompile.tree.register({cls.__name__}): pass flatten and unflatten functions "
                            "(flatten(obj) -> (children, aux), unflatten(aux, children) -> obj), or register "
                            "a dataclass")
        names = [f.name for f in dataclasses.fields(cls)]
        data = list(names if data_fields is None else data_fields)
        meta = list([n for n in names if n not in data] if meta_fields is None else meta_fields)
        unknown = sorted(set(data + meta) - set(names))
        if unknown:
            raise CallError(f"adcompile.tree.register({cls.__name__}): {unknown} are not fields of the dataclass")

        def flatten(obj):
            return [getattr(obj, n) for n in data], tuple(getattr(obj, n) for n in meta)

        def unflatten(aux, children):
            return cls(**dict(zip(data, children)), **dict(zip(meta, aux)))
        _NODES[cls] = NodeType(cls, flatten, unflatten, keys=lambda aux, n: list(data))
        _LEAF_TYPES.discard(cls)
        return cls
    if flatten is None or unflatten is None:
        raise CallError(f"adcompile.tree.register({cls.__name__}): pass both flatten and unflatten")
    _NODES[cls] = NodeType(cls, flatten, unflatten)
    _LEAF_TYPES.discard(cls)
    return cls


def is_registered(cls):
    return cls in _NODES
