"""adcompile.tree: flatten/unflatten/leaves/structure/map/register on the built-in node types
and registered classes, against the structures JAX gives the same trees."""
import collections
import dataclasses

import numpy as np
import pytest

import adcompile
from adcompile import tree


def test_dict_keys_are_sorted_and_nesting_is_depth_first():
    params = {"b1": 2.0, "W1": np.ones(2), "layers": [{"w": 3.0, "b": 4.0}, (5.0, None)]}
    leaves, treedef = tree.flatten(params)
    assert [np.asarray(x).tolist() for x in leaves] == [[1.0, 1.0], 2.0, 4.0, 3.0, 5.0]
    assert treedef.paths() == [("W1",), ("b1",), ("layers", 0, "b"), ("layers", 0, "w"), ("layers", 1, 0)]
    rebuilt = tree.unflatten(treedef, leaves)
    assert rebuilt.keys() == params.keys() and rebuilt["layers"][1] == (5.0, None)
    assert isinstance(rebuilt["layers"], list) and isinstance(rebuilt["layers"][1], tuple)


def test_none_has_no_leaves_and_a_leaf_is_its_own_tree():
    assert tree.leaves(None) == [] and tree.leaves((None, None)) == []
    assert tree.leaves(3.0) == [3.0] and tree.structure(3.0).is_leaf
    assert tree.unflatten(tree.structure(None), []) is None


def test_structures_compare_by_shape_not_by_leaf_values():
    a = tree.structure({"x": 1.0, "y": (2.0, 3.0)})
    assert a == tree.structure({"y": (np.zeros(3), 0), "x": "anything"})
    assert hash(a) == hash(tree.structure({"x": 0, "y": (0, 0)}))
    assert a != tree.structure({"x": 1.0, "y": [2.0, 3.0]})  # a list is not a tuple
    assert a != tree.structure({"x": 1.0, "z": (2.0, 3.0)})


def test_namedtuple_ordered_dict_and_defaultdict_keep_their_type_and_order():
    Point = collections.namedtuple("Point", "y x")
    ordered = collections.OrderedDict([("z", 1.0), ("a", 2.0)])
    counts = collections.defaultdict(float, {"b": 1.0, "a": 2.0})
    leaves, treedef = tree.flatten((Point(1.0, 2.0), ordered, counts))
    assert leaves == [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]
    assert treedef.paths()[:2] == [(0, "y"), (0, "x")]
    point, od, dd = tree.unflatten(treedef, [10.0, 20.0, 1, 2, 3, 4])
    assert point == Point(10.0, 20.0) and list(od.items()) == [("z", 1), ("a", 2)]
    assert dd.default_factory is float and dict(dd) == {"b": 3, "a": 4}


def test_map_over_several_trees_and_mismatch_error():
    params = {"W": np.array([1.0, 2.0]), "b": 0.5}
    grads = {"W": np.array([10.0, 20.0]), "b": 1.0}
    new = tree.map(lambda p, g: p - 0.1 * g, params, grads)
    np.testing.assert_allclose(new["W"], [0.0, 0.0])
    assert new["b"] == pytest.approx(0.4)
    with pytest.raises(adcompile.AdCompileError, match="differs"):
        tree.map(lambda p, g: p, params, {"W": 1.0})


def test_register_a_dataclass_and_a_user_class():
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
        name: str = "dense"

    tree.register(Layer, data_fields=["w", "b"], meta_fields=["name"])
    leaves, treedef = tree.flatten([Layer(1.0, 2.0, "first")])
    assert leaves == [1.0, 2.0] and treedef.paths() == [(0, "w"), (0, "b")]
    assert tree.unflatten(treedef, [3.0, 4.0]) == [Layer(3.0, 4.0, "first")]
    assert tree.structure(Layer(1.0, 2.0, "a")) != tree.structure(Layer(1.0, 2.0, "b"))  # meta is static

    class Pair:
        def __init__(self, left, right):
            self.left, self.right = left, right

    tree.register(Pair, lambda p: ((p.left, p.right), None), lambda aux, ch: Pair(*ch))
    doubled = tree.map(lambda v: 2 * v, Pair(1.0, {"k": 2.0}))
    assert isinstance(doubled, Pair) and doubled.left == 2.0 and doubled.right == {"k": 4.0}


def test_register_errors_are_clear():
    with pytest.raises(adcompile.AdCompileError, match="flatten and unflatten"):
        tree.register(type("Plain", (), {}))
    with pytest.raises(adcompile.AdCompileError, match="has 2 leaves, got 1"):
        tree.unflatten(tree.structure((1, 2)), [1])


def test_path_names_are_identifiers():
    assert tree.path_name("params", ("W1",)) == "params_W1"
    assert tree.path_name("layers", (0, "b")) == "layers_0_b"
    assert tree.path_name("p", ("a-b c",)) == "p_a_b_c"
    assert tree.path_text("layers", (0, "b")) == "layers[0]['b']"


def test_leaves_in_a_structure_read_a_mapping_by_its_keys():
    from adcompile.tree.structure import leaves_in

    ordered = collections.OrderedDict([("w", 1.0), ("b", (2.0, 3.0))])
    treedef = tree.structure(ordered)
    assert leaves_in(treedef, {"b": (20.0, 30.0), "w": 10.0}) == [10.0, 20.0, 30.0]  # a dict for the OrderedDict
    assert leaves_in(treedef, {"w": 1.0}) is None and leaves_in(treedef, {"w": 1.0, "b": [2.0, 3.0]}) is None
    assert leaves_in(tree.structure((1.0, None)), (5.0, None)) == [5.0]
    assert leaves_in(tree.structure((1.0, 2.0)), ((1.0,), 2.0)) is None
