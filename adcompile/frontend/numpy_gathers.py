"""Handlers for gathers and scatters: np.take, np.take_along_axis, np.add.at, np.bincount,
np.triu_indices/np.tril_indices, and the reads ``x[mask]`` (see ``calls.py``)."""
from .calls import atom


def gather_along(tr, x, axis, idx, node):
    """``np.take(x, idx, axis)`` for an int array (or int) ``idx``: a gather of the leading axis
    (whose adjoint scatter-add the code generator handles), the axis moved there and back."""
    kind = "array" if idx.type.ndim else "int"
    if axis == 0:
        return tr.getitem(x, [(kind, idx)], node)
    order = (axis,) + tuple(k for k in range(x.type.ndim) if k != axis)
    gathered = tr.getitem(_transposed(tr, x, order, node), [(kind, idx)], node)
    if kind == "int":
        return gathered
    count = idx.type.ndim  # the gathered axes come first: put the leading axes of x before them
    moved = tuple(range(count, count + axis)) + tuple(range(count)) + tuple(range(count + axis, gathered.type.ndim))
    return _transposed(tr, gathered, moved, node)


def _transposed(tr, x, order, node):
    if order == tuple(range(x.type.ndim)):
        return x
    if x.type.ndim == 2:
        return tr.emit("transpose", [x], node)
    return tr.emit("transpose", [x], node, axes=order)
