"""Flattening a pytree to its leaves and a ``TreeDef`` (its structure), and back.

A ``TreeDef`` is immutable and hashable (so compiled code can be specialised on it) and
compares by structure: two dicts with the same keys holding leaves of any value have equal
TreeDefs. ``paths`` name each leaf by the keys leading to it (``("W1",)``, ``(0, "b")``),
which compiled code uses to name its parameters (``params_W1``, ``layers_0_b``).
"""
from ..errors import CallError
from .registry import node_type


class TreeDef:
    """The structure of a pytree: a leaf (``node`` None) or a node type with its static data
    and the TreeDefs of its children."""

    __slots__ = ("node", "aux", "children", "num_leaves", "_key", "_hash")

    def __init__(self, node, aux, children):
        self.node, self.aux, self.children = node, aux, tuple(children)
        self.num_leaves = 1 if node is None else sum(c.num_leaves for c in self.children)
        self._key = None if node is None else (node.cls, aux, tuple(c._key for c in self.children))
        self._hash = None

    @property
    def is_leaf(self):
        return self.node is None

    def __eq__(self, other):
        return isinstance(other, TreeDef) and self._key == other._key

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key)
        return self._hash

    def unflatten(self, leaves):
        """The pytree of this structure holding ``leaves`` in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise CallError(f"adcompile.tree.unflatten: the structure {self} has {self.num_leaves} leaves, "
                            f"got {len(leaves)}")
        return self._build(iter(leaves))

    def _build(self, leaves):
        if self.node is None:
            return next(leaves)
        return self.node.unflatten(self.aux, [child._build(leaves) for child in self.children])

    def child_keys(self):
        """The keys naming this node's children (dict keys, field names or positions)."""
        return self.node.keys(self.aux, len(self.children))

    def paths(self):
        """One tuple of keys per leaf, in leaf order."""
        if self.node is None:
            return [()]
        return [(key,) + path for key, child in zip(self.child_keys(), self.children) for path in child.paths()]

    def __repr__(self):
        if self.node is None:
            return "*"
        inner = ", ".join(f"{k!r}: {c!r}" if isinstance(k, str) else repr(c)
                          for k, c in zip(self.child_keys(), self.children))
        return f"{self.node.name}({inner})"


LEAF = TreeDef(None, None, ())


def flatten(tree, is_leaf=None):
    """``(leaves, treedef)`` of ``tree``: leaves depth first, a dict's in sorted key order.

    >>> import adcompile
    >>> leaves, treedef = adcompile.tree.flatten({"b": [1.0, 2.0], "a": (3.0, None)})
    >>> leaves, treedef
    ([3.0, 1.0, 2.0], dict('a': tuple(*, None()), 'b': list(*, *)))
    >>> adcompile.tree.unflatten(treedef, [30.0, 10.0, 20.0])
    {'a': (30.0, None), 'b': [10.0, 20.0]}
    """
    leaves = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def _flatten(tree, leaves, is_leaf):
    node = None if is_leaf is not None and is_leaf(tree) else node_type(tree)
    if node is None:
        leaves.append(tree)
        return LEAF
    children, aux = node.flatten(tree)
    return TreeDef(node, aux, [_flatten(child, leaves, is_leaf) for child in children])


def leaves_in(treedef, tree):
    """The leaves of ``tree`` in the order of the structure ``treedef``, or None where ``tree`` has
    another structure. A mapping is read by ``treedef``'s keys, so a plain dict stands for an
    OrderedDict with the same keys (a cotangent built from a gradient dict keyed like
    ``named_parameters()``)."""
    leaves = []
    return leaves if _read_in(treedef, tree, leaves) else None


def _read_in(treedef, tree, leaves):
    node = node_type(tree)
    if treedef.is_leaf:
        leaves.append(tree)
        return node is None
    if issubclass(treedef.node.cls, dict) and isinstance(tree, dict):
        keys = treedef.child_keys()
        if set(keys) != set(tree) or len(keys) != len(tree):
            return False
        return all(_read_in(child, tree[key], leaves) for key, child in zip(keys, treedef.children))
    if node is not treedef.node:
        return False
    children, aux = node.flatten(tree)
    if aux != treedef.aux or len(children) != len(treedef.children):
        return False
    return all(_read_in(child, item, leaves) for child, item in zip(treedef.children, children))


def unflatten(treedef, leaves):
    """The pytree of structure ``treedef`` holding ``leaves``."""
    if not isinstance(treedef, TreeDef):
        raise CallError(f"adcompile.tree.unflatten takes a structure (adcompile.tree.structure(tree)), "
                        f"not {type(treedef).__name__}")
    return treedef.unflatten(leaves)


def leaves(tree, is_leaf=None):
    """The leaves of ``tree``, in flattening order."""
    return flatten(tree, is_leaf)[0]


def structure(tree, is_leaf=None):
    """The TreeDef of ``tree``."""
    return flatten(tree, is_leaf)[1]


def is_container(value):
    """Whether ``value`` is a pytree node (not a leaf), None excepted."""
    return value is not None and node_type(value) is not None


def map(f, tree, *rest, is_leaf=None):  # noqa: A001  (adcompile.tree.map, as jax.tree.map)
    """``f`` applied leafwise: ``map(lambda p, g: p - lr * g, params, grads)``. Every tree in
    ``rest`` has the structure of ``tree``.

    >>> import numpy as np, adcompile
    >>> params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    >>> grads = {"w": np.array([10.0, 10.0]), "b": 1.0}
    >>> adcompile.tree.map(lambda p, g: p - 0.1 * g, params, grads)
    {'b': 0.4, 'w': array([0., 1.])}
    """
    flat, treedef = flatten(tree, is_leaf)
    others = []
    for k, other in enumerate(rest):
        other_flat, other_def = flatten(other, is_leaf)
        if other_def != treedef:
            raise CallError(f"adcompile.tree.map: tree {k + 1} has structure {other_def}, which differs from "
                            f"the first tree's {treedef}")
        others.append(other_flat)
    return treedef.unflatten([f(*args) for args in zip(flat, *others)])


def path_name(prefix, path):
    """An identifier for a leaf: ``params`` and ``("W1",)`` -> ``params_W1``."""
    parts = [prefix] + [str(key) for key in path]
    text = "_".join(parts)
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in text)


def path_text(prefix, path):
    """A leaf as Python would reach it: ``params["W1"]``, ``layers[0]["b"]``."""
    return prefix + "".join(f"[{key!r}]" for key in path)
