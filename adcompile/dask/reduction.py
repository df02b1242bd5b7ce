"""Tree reduction of per-block partial results, as Dask tasks on the workers.

A partial result is ``(rows, value, derivatives)`` where value and derivatives are already
weighted for the reduction (``reduce="mean"``: multiplied by the block's row count; ``"sum"``:
as they are). ``combine`` adds partial results; ``tree_reduce`` combines ``split_every`` of them
per task, level by level, so no task receives more than ``split_every`` partial results and the
client receives one. ``finish`` divides by the total row count for a mean.
"""
from ..errors import CallError

REDUCTIONS = ("mean", "sum")


def combine(*parts):
    rows = sum(part[0] for part in parts)
    value = sum(part[1] for part in parts) if parts[0][1] is not None else None
    derivatives = tuple(sum(items[1:], items[0]) for items in zip(*(part[2] for part in parts)))
    return rows, value, derivatives


def weighted(rows, value, derivatives, reduce):
    """A block's partial result."""
    if reduce == "mean":
        return rows, (None if value is None else rows * value), tuple(rows * d for d in derivatives)
    return rows, value, tuple(derivatives)


def finish(total, reduce):
    rows, value, derivatives = total
    if reduce == "mean":
        return (None if value is None else value / rows), tuple(d / rows for d in derivatives)
    return value, derivatives


def tree_reduce(parts, submit, split_every=8):
    """Reduce ``parts`` with ``submit(combine, *group)`` (``dask.delayed`` or ``client.submit``)."""
    parts = list(parts)
    while len(parts) > 1:
        parts = [submit(combine, *parts[k:k + split_every]) if len(parts[k:k + split_every]) > 1
                 else parts[k] for k in range(0, len(parts), split_every)]
    return parts[0]


def check_reduce(reduce, what):
    if reduce not in REDUCTIONS:
        raise CallError(
            f"{what}: reduce={reduce!r} is not supported: the whole-data loss must follow from the block "
            "losses as a row-weighted mean (reduce='mean', for a loss that is a mean over rows) or a sum "
            "(reduce='sum', for a loss that is a sum over rows). Losses such as a max or median over rows, or "
            "the log of a mean, do not decompose over blocks; rewrite them as a mean or sum of per-row terms")
