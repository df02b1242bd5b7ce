"""Data-parallel derivatives and training on Dask (the optional extra ``adcompile[dask]``).

``value_and_grad``, ``grad`` and ``hvp`` compute derivatives of a loss written for one block
of rows over data sharded along axis 0 (dask arrays), running the compiled code on every block
where it lives and tree-reducing the results; ``fit`` trains a Module by synchronous
data-parallel minibatch SGD on a ``distributed`` cluster (or, with ``sync_every=k``, by local SGD
with averaging every ``k`` steps). See ``docs/dask.md``.
"""
try:
    import dask  # noqa: F401  (lazy: optional, slow to import)
    import dask.array  # noqa: F401  (lazy: optional, slow to import)
except ImportError as error:  # pragma: no cover - exercised only without the extra
    raise ImportError("adcompile.dask needs dask: pip install 'adcompile[dask]' "
                      "(dask[array] and distributed)") from error

from .gradients import grad, hvp, value_and_grad
from .training import fit

__all__ = ["value_and_grad", "grad", "hvp", "fit"]
