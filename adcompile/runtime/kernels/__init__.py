"""The runtime kernels, one family per module, each plain-numpy module beside its numba version.

    broadcasting      unbroadcast, broadcast_to_shape, expand_axis
    reductions        sum_axis, mean_axis, max_axis, min_axis, prod_axis
    gathers           scatter_add, scatter_add2, index_add
    linalg            matmul and its shape check, diag_adjoint, the decompositions' helpers
    scans             cumulative sums and sorting permutations along an axis
    bookkeeping       tapes, trip counts, dtype casts of cotangents, run-time checks
    special_functions erf, gamma, polygamma, expit, xlogy, ... (scipy.special)
    elementary        exp (compiled: an exponential LLVM vectorises)

``<family>.py`` holds the numpy functions generated code calls as ``rt.<name>`` when run as
Python (``runtime/helpers.py`` gathers them); ``<family>_numba.py`` registers their numba
versions (imported by ``runtime/numba_impls.py``); ``numba_support.py`` is what those share.
Only the ``*_numba`` modules and ``numba_support`` import numba.
"""
