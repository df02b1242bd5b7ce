"""Stacks of matrices in ``np.linalg``: a loop over the matrices, each taken by the 2-d primitive.

numba's LAPACK wrappers take one matrix, so ``np.linalg.solve(A, b)`` with ``A`` of shape
``(k, n, n)`` becomes the loop a person would write,

    x = np.zeros((A.shape[0], n, m))
    for i in range(A.shape[0]):
        x[i] = np.linalg.solve(A[i], b[i])

(several leading axes are flattened into one by a reshape, and restored after). The
derivative is then the loop's: each matrix gets the rules of the 2-d primitive, at first and
second order, with no rule of its own. Stacked operands must have the same leading shape
(numpy would broadcast a stack of one; here a mismatched size is a located shape error).
"""
from ...errors import TypeMismatchError
from ...ir.builder import Builder, const
from ...ir.nodes import For, SetItem, Var
from ...ir.types import I8
from ...ir.indexing import FULL_SLICE



def leading_axes(x, core):
    """How many axes of ``x`` stack its core (``core`` trailing axes: 2 for a matrix)."""
    return max(x.type.ndim - core, 0)


def map_over_stack(tr, operands, cores, build, result_dims, node, what):
    """The results of ``build`` (a function of operands with only their core axes, returning a
    list of atoms) for each matrix of the stacked ``operands``, with the stack axes in front.

    ``cores[k]`` is the number of core axes of ``operands[k]``; ``result_dims(operands)`` gives,
    for each result, its core dims (a list of int atoms) from the operands' trailing dims
    (``trailing_dim``)."""
    stacked = [k for k, (x, core) in enumerate(zip(operands, cores)) if leading_axes(x, core)]
    if not stacked:
        return build(operands)
    depth = leading_axes(operands[stacked[0]], cores[stacked[0]])
    if any(leading_axes(operands[k], cores[k]) != depth for k in stacked):
        raise tr.error(f"{what}: the stacks of matrices must have the same number of leading axes", node,
                       TypeMismatchError)
    leader = operands[stacked[0]]
    stack_dims = [tr.emit("dim", [leader], node, axis=k) for k in range(depth)]
    count = stack_dims[0]
    for d in stack_dims[1:]:
        count = tr.emit("mul", [count, d], node)
    flat = list(operands)
    for k in stacked:
        x = operands[k]
        if k != stacked[0] or depth > 1:  # one stack axis, and a size check of the other stacks
            core_dims = [tr.emit("dim", [x], node, axis=a) for a in range(depth, x.type.ndim)]
            flat[k] = tr.emit("reshape", [x, count] + core_dims, node)
    dims = result_dims(flat)
    index = Var(tr.namer.fresh("i"), I8)
    body = []
    saved_block, saved_builder = tr.block, tr.builder
    tr.block, tr.builder = body, Builder(tr.namer, body, tr.src.location(node))
    try:
        pieces = [tr.getitem(x, [("int", index)] + [FULL_SLICE] * cores[k], node) if k in stacked else x
                  for k, x in enumerate(flat)]
        results = build(pieces)
    finally:
        tr.block, tr.builder = saved_block, saved_builder
    outputs = []
    for result, core_dims in zip(results, dims):
        out = tr.emit("zeros", [count] + core_dims, node, ndim=1 + len(core_dims), dtype=result.type.dtype)
        body.append(SetItem(out, result, [("int", index)] + [FULL_SLICE] * len(core_dims), tr.src.location(node)))
        outputs.append(out)
    tr.block.append(For(index, const(0), count, const(1), body, tr.src.location(node)))
    if depth == 1:
        return outputs
    return [tr.emit("reshape", [out] + stack_dims + core_dims, node) for out, core_dims in zip(outputs, dims)]


def trailing_dim(tr, x, from_end, node):
    """The dim ``from_end`` axes from the end of ``x`` (1: its number of columns)."""
    return tr.emit("dim", [x], node, axis=x.type.ndim - from_end)
