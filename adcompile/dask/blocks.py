"""Row blocks of the data arguments: dask arrays chunked along axis 0, aligned across arguments.

Every data argument (a dask array, or a numpy array that is not differentiated, taken as one
chunk) must have the same number of rows. The row chunks of the first dask array are the
blocks; the other data arguments are rechunked to the same row boundaries (a no-op when they
already match, as for ``X`` and ``y`` built alike) and to one chunk along their other axes, so
block ``i`` of every argument holds the same rows. Empty blocks are left out.
"""
import numpy as np

from ..errors import CallError


def is_dask_array(value):
    try:
        import dask.array as da  # lazy: optional, slow to import
    except ImportError:
        return False
    return isinstance(value, da.Array)


def stand_in(value):
    """A numpy array with the dtype and ndim of a data argument (for the kernel's signature)."""
    if is_dask_array(value):
        return np.empty((0,) * value.ndim, dtype=value.dtype)
    return value


class RowBlocks:
    """The data arguments at ``positions`` split into aligned row blocks."""

    def __init__(self, args, positions, what):
        import dask.array as da  # lazy: optional, slow to import
        self.positions = list(positions)
        arrays = [args[k] for k in self.positions]
        for k, array in zip(self.positions, arrays):
            if np.ndim(array) == 0:
                raise CallError(f"{what}: data argument {k} is a scalar; data arguments have rows along axis 0")
        rows = {int(array.shape[0]) for array in arrays}
        if len(rows) != 1 or any(np.isnan(array.shape[0]) for array in arrays if is_dask_array(array)):
            raise CallError(f"{what}: the data arguments must have the same, known number of rows along axis 0; "
                            f"they have {[array.shape[0] for array in arrays]}")
        self.n_rows = rows.pop()
        first = next((a for a in arrays if is_dask_array(a)), None)
        row_chunks = first.chunks[0] if first is not None else (self.n_rows,)
        aligned = []
        for array in arrays:
            if not is_dask_array(array):
                array = da.from_array(np.asarray(array), chunks=(row_chunks,) + tuple(-1 for _ in array.shape[1:]))
            target = {0: row_chunks, **{axis: -1 for axis in range(1, array.ndim)}}
            if array.chunks[0] != row_chunks or any(len(c) != 1 for c in array.chunks[1:]):
                array = array.rechunk(target)
            aligned.append(array)
        self.arrays = aligned
        self.sizes = [int(size) for size in row_chunks]
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.int64)
        keep = [i for i, size in enumerate(self.sizes) if size > 0]
        delayed = [array.to_delayed().reshape(-1) for array in aligned]
        self.blocks = [tuple(d[i] for d in delayed) for i in keep]  # per block: one delayed per argument
        self.block_sizes = [self.sizes[i] for i in keep]
        self.block_offsets = [int(self.offsets[i]) for i in keep]


def insert(template, positions, values):
    """``template`` with ``values`` put at ``positions``."""
    args = list(template)
    for k, value in zip(positions, values):
        args[k] = value
    return args
