"""Pytrees: nested tuples, lists, dicts, namedtuples, None and registered classes of arrays.

    params = {"W": np.zeros((3, 2)), "b": np.zeros(2)}
    grads = adcompile.grad(loss)(params, X, y)                  # a dict like params
    params = adcompile.tree.map(lambda p, g: p - 0.1 * g, params, grads)

Compiled and derived functions take and return pytrees: arguments are flattened to their
leaves at the call, the compiled code is a function of the leaves, and results (gradients
in the structure of their argument) are rebuilt from leaves. These functions are the same
operations, eager and in plain Python, for use between calls (an optimizer step).
"""
from .registry import register
from .structure import TreeDef, flatten, is_container, leaves, map, path_name, path_text, structure, unflatten

__all__ = ["flatten", "unflatten", "leaves", "structure", "map", "register", "TreeDef", "is_container",
           "path_name", "path_text"]
