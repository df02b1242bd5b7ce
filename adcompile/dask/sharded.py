"""Running a kernel on every row block where it lives and tree-reducing the results.

``run_sharded`` builds one Dask graph per call: a task per row block that calls the kernel on
that block (so the block is read on the worker holding or generating it, never gathered), the
tree reduction of the partial results, and a single compute. The kernel and the parameters are
one key each in the graph, so each worker receives them once per call, not once per block.
"""
from .blocks import RowBlocks, insert
from .reduction import finish, tree_reduce, weighted


def block_task(kernel, template, extra, positions, reduce, has_value, *blocks):
    """On a worker: the kernel on one block, as a weighted partial result."""
    result = kernel(insert(template, positions, blocks), extra)
    rows = int(blocks[0].shape[0])
    value, derivatives = (result[0], result[1:]) if has_value else (None, result)
    return weighted(rows, value, derivatives, reduce)


def run_sharded(kernel, flat_args, data_positions, reduce, what, extra=(), has_value=True, client=None):
    """(value or None, tuple of derivatives) of the whole data, reduced over the row blocks."""
    import dask  # lazy: optional, slow to import
    from dask import delayed  # lazy: optional, slow to import

    blocks = RowBlocks(flat_args, data_positions, what)
    template = insert(flat_args, data_positions, [None] * len(data_positions))
    kernel_key = delayed(kernel, pure=False)
    template_key = delayed(tuple(template), pure=False)
    extra_key = delayed(tuple(extra), pure=False)
    task = delayed(block_task, pure=True)
    parts = [task(kernel_key, template_key, extra_key, tuple(data_positions), reduce, has_value, *block)
             for block in blocks.blocks]
    total = tree_reduce(parts, lambda fn, *group: delayed(fn, pure=True)(*group))
    if client is not None:
        total = client.compute(total).result()
    else:
        (total,) = dask.compute(total)
    return finish(total, reduce)
