"""Jacobians and Hessians in JAX's structure, assembled from one derivative per row or column.

``jacobian(f)(x)`` of an ``f`` returning one array is one generated function (a loop of vjps or
jvps, ``transforms/matrix_ir.py``). Where ``f`` returns a tuple, list or dict of arrays, or is
differentiated with respect to a dict of arrays, the result is a pytree of blocks, as JAX's:
its outer structure the output's, its inner structure the argument's, the block of output
``o`` and argument leaf ``a`` of shape ``o.shape + a.shape``. (A Hessian with respect to a dict
is the Jacobian of the gradient, whose output is a dict like the argument: a dict of dicts,
``H["W"]["b"]`` of shape ``W.shape + b.shape``.) These are assembled here from calls of one
derived function of the flat code: a vjp per output element (``mode="rev"``), or a jvp per
input element (``mode="fwd"``), with unit cotangents or tangents.
"""
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import InternalError
from ..tree import leaves as tree_leaves
from ..tree.structure import TreeDef
from .derived_cache import derived_function
from .directions import unit_tensors


@dataclass(frozen=True)
class MatrixLayout:
    """What a Jacobian of ``function`` (a compiled or derived function of flat arguments) is
    assembled in: the flat positions ``wrt`` of the argument it is taken with respect to (one
    per leaf), ``rebuild_argument`` (blocks, one per ``wrt`` entry -> the argument's structure),
    and ``outputs`` (the structure of ``function``'s flat results)."""

    function: object
    wrt: tuple
    rebuild_argument: Callable
    outputs: TreeDef
    mode: str = "rev"


class AssembledMatrix:
    """A Jacobian or Hessian called as a flat function is (``run``): assembled by ``layout``."""

    def __init__(self, layout):
        self.layout = layout

    def run(self, args, extra=()):
        return assembled_jacobian(self.layout, args)


def assembled_jacobian(layout, args):
    """The Jacobian of ``layout.function`` at the flat arguments ``args``: the output's structure
    holding, per output leaf, the argument's structure of blocks."""
    blocks = _rows(layout, args) if layout.mode == "rev" else _columns(layout, args)
    return layout.outputs.unflatten([layout.rebuild_argument(row) for row in blocks])


def _zero_like(value):
    return np.zeros(np.shape(value), dtype=np.result_type(value, np.float32)) if np.ndim(value) else 0.0


def _outputs(layout, args):
    """The flat outputs of ``layout.function`` at ``args``."""
    outputs = tree_leaves(layout.function.run(args))
    if len(outputs) != layout.outputs.num_leaves:
        raise InternalError(f"{layout.function.name}: {len(outputs)} outputs, but the structure {layout.outputs} "
                            f"has {layout.outputs.num_leaves} leaves")
    return outputs


def _rows(layout, args):
    """blocks[o][a] from one vjp per element of each output ``o``."""
    outputs = _outputs(layout, args)
    pullback = derived_function(layout.function, "vjp", layout.wrt)
    shapes = [np.shape(args[k]) for k in layout.wrt]
    blocks = []
    for o, out in enumerate(outputs):
        cotangents = [_zero_like(other) for other in outputs]
        dtype = np.result_type(out, *(args[k] for k in layout.wrt), np.float32)
        rows = []
        for unit in unit_tensors(np.shape(out), dtype):
            cotangents[o] = unit
            rows.append(pullback.call_with_extra(args, tuple(cotangents))[-len(layout.wrt):])
        blocks.append([_stacked([row[a] for row in rows], np.shape(out), shape, first=True)
                       for a, shape in enumerate(shapes)])
    return blocks


def _columns(layout, args):
    """blocks[o][a] from one jvp per element of each argument leaf ``a``."""
    tangents = [_zero_like(args[k]) for k in layout.wrt]
    product = derived_function(layout.function, "jvp", layout.wrt, tangents_only=True)
    n_outputs = layout.outputs.num_leaves
    columns = []  # per argument leaf: per unit tangent, the outputs' tangents
    for a, k in enumerate(layout.wrt):
        dtype = np.result_type(args[k], np.float32)
        leaf_columns = []
        for unit in unit_tensors(np.shape(args[k]), dtype):
            tangents[a] = unit
            result = product.call_with_extra(args, tuple(tangents))
            leaf_columns.append(result if isinstance(result, tuple) else (result,))
        tangents[a] = _zero_like(args[k])
        columns.append(leaf_columns)
    out_shapes = _output_shapes(layout, args, columns)
    return [[_stacked([column[o] for column in columns[a]], out_shapes[o], np.shape(args[k]), first=False)
             for a, k in enumerate(layout.wrt)] for o in range(n_outputs)]


def _output_shapes(layout, args, columns):
    for leaf_columns in columns:
        if leaf_columns:
            return [np.shape(value) for value in leaf_columns[0]]
    return [np.shape(out) for out in _outputs(layout, args)]  # no argument element to take a column for


def _stacked(parts, out_shape, in_shape, first):
    """One block, ``out_shape + in_shape``, from rows (``first``: one per output element, each of
    ``in_shape``) or columns (one per argument element, each of ``out_shape``)."""
    if not parts:
        return np.zeros(out_shape + in_shape)
    flat = np.stack([np.reshape(part, -1) for part in parts], axis=0 if first else 1)
    return flat.reshape(out_shape + in_shape)
