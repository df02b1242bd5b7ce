"""Flattening and rebuilding pytrees of one known structure fast: the per-structure plans a call
with pytree arguments reuses (``module_compiler/tree_plans.py``).

``adcompile.tree.flatten`` discovers a structure (it builds a ``TreeDef`` node by node, sorting
dict keys); a training loop calls ``grad(loss)(params, X, y)`` with the same structure every
time. ``reader(treedef)`` is a function taking a value to its leaves when the value has that
structure, or None when it has not (then the caller flattens it in full); ``builder(treedef)``
puts leaves back into the structure. Both are made once per structure and kept.
"""
import numpy as np

from .registry import node_type

# leaves recognised by their type alone; anything else makes ``reader`` answer None (not a match)
FAST_LEAF_TYPES = frozenset({np.ndarray, float, int, bool, np.float64, np.float32, np.int64, np.bool_})

_readers = {}
_builders = {}


def reader(treedef):
    """``read(value, leaves) -> bool``: appends ``value``'s leaves to ``leaves`` and says True
    when ``value`` has the structure ``treedef`` (its leaves of the common leaf types)."""
    return _kept(_readers, _make_reader, treedef)


def _kept(cache, make, treedef):
    """``make(treedef)``, made once per structure."""
    made = cache.get(treedef)
    if made is None:
        made = cache[treedef] = make(treedef)
    return made


def _make_reader(treedef):
    if treedef.is_leaf:
        def read_leaf(value, leaves):
            if type(value) not in FAST_LEAF_TYPES:
                return False
            leaves.append(value)
            return True
        return read_leaf
    cls, children = treedef.node.cls, [reader(child) for child in treedef.children]
    if cls is dict:
        keys = treedef.aux
        pairs = list(zip(keys, children))

        def read_dict(value, leaves):
            if type(value) is not dict or len(value) != len(pairs):
                return False
            for key, read in pairs:
                item = value.get(key, _MISSING)
                if item is _MISSING or not read(item, leaves):
                    return False
            return True
        return read_dict
    if cls is tuple or cls is list:
        def read_sequence(value, leaves):
            if type(value) is not cls or len(value) != len(children):
                return False
            return all(read(item, leaves) for read, item in zip(children, value))
        return read_sequence
    node, aux = treedef.node, treedef.aux

    def read_node(value, leaves):  # namedtuples, None, registered classes: their own flatten
        if type(value) is not cls or node_type(value) is not node:
            return False
        items, value_aux = node.flatten(value)
        if value_aux != aux or len(items) != len(children):
            return False
        return all(read(item, leaves) for read, item in zip(children, items))
    return read_node


_MISSING = object()


def builder(treedef):
    """``build(leaves) -> tree`` of structure ``treedef`` (``leaves`` a sequence of its length)."""
    return _kept(_builders, _make_builder, treedef)


def _make_builder(treedef):
    if treedef.is_leaf:
        return lambda leaves: leaves[0]
    if treedef.node.cls is dict and all(child.is_leaf for child in treedef.children):
        keys = treedef.aux
        return lambda leaves: dict(zip(keys, leaves))
    return treedef.unflatten
