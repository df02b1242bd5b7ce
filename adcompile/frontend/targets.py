"""Subscript assignment targets, chained ones included: ``w[1][0] = v`` writes into ``w``.

In numpy ``w[1]`` is a view, so ``w[1][0] = v`` changes ``w``. The IR writes only into named
arrays, so a chain of basic indices is merged into one index of the array at its root:

    w[1][0] = v          ->  w[1, 0] = v
    w[:, 2][1:] = v      ->  w[1:, 2] = v
    w[1:3][:, 0] = v     ->  w[1:3, 0] = v

A chain that cannot be merged into one index (an integer-array or mask index in the chain,
whose result is a copy, so that numpy's write does not reach ``w`` at all; a non-trivial
slice indexed again) is rejected with a located error.
"""
import ast
import re

from ..errors import UnsupportedSyntaxError
from ..ir.nodes import Var
from ..ir.indexing import result_ndim
from ..ir.indexing import FULL_SLICE



def subscript_target(tr, target):
    """The array and the index items that the subscript target ``target`` writes."""
    chain, base = [], target
    while isinstance(base, ast.Subscript):
        chain.append(base.slice)
        base = base.value
    chain.reverse()
    array = tr.expr(base)
    if isinstance(array, Var) and array.is_temp:
        # `w.T[0] = v`: the write goes into this view, which becomes a named variable
        array.is_temp = False
        array.name = tr.namer.fresh(re.sub(r"\W+", "_", ast.unparse(base)).strip("_") or "view")
    items = tr.index_items(array, chain[0])
    for slice_node in chain[1:]:
        if any(item[0] in ("array", "mask") for item in items):
            raise _chain_error(tr, target, "its first index selects with an integer array or a mask, which "
                               "makes a copy: numpy writes into that copy and leaves the array unchanged")
        try:
            ndim = result_ndim(array.type, items)
        except Exception as exc:
            raise tr.error(str(exc), target) from None
        view = Var("_view", array.type.with_ndim(ndim))
        items = _merge(tr, target, items, tr.index_items(view, slice_node), array.type.ndim)
    return array, items


def _merge(tr, target, inner, outer, ndim):
    """One index equal to indexing with ``inner`` and then with ``outer``."""
    consumed = sum(1 for item in inner if item[0] in ("int", "slice"))
    # the view's axes, each the inner item that made it (a full slice for the trailing axes)
    merged, slots = [], []
    for item in inner:
        merged.append(item)
        if item[0] in ("slice", "none"):
            slots.append(len(merged) - 1)
    for _ in range(ndim - consumed):
        merged.append(FULL_SLICE)
        slots.append(len(merged) - 1)
    for position, item in enumerate(outer):
        if item[0] in ("array", "mask", "none"):
            raise _chain_error(tr, target, "a chained index may hold integers and slices only")
        if position >= len(slots):
            raise tr.error(f"too many indices for the {len(slots)}-d view in this chained index", target)
        k = slots[position]
        made_by = merged[k]
        if item == FULL_SLICE:
            continue  # the view's axis is kept as it is
        if made_by == FULL_SLICE:
            merged[k] = item
        elif made_by[0] == "none" and item[0] == "int" and getattr(item[1], "value", None) in (0, -1):
            merged[k] = None  # indexing a new axis of length 1 removes it
        else:
            raise _chain_error(tr, target, "a slice with bounds or a new axis is indexed again")
    return [item for item in merged if item is not None]


def _chain_error(tr, target, why):
    return tr.error(f"cannot merge the chained index of this assignment into one index ({why}); "
                    "write it as a single index, such as w[i, j] = v", target, UnsupportedSyntaxError)
