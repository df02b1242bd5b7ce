"""Sorting permutations for order statistics: ``argsort_rows`` sorts each row of a matrix.

The order statistics themselves (``np.median``, ``np.percentile``, ``np.quantile``) are
gathers of the array at the positions these permutations give (frontend/numpy_statistics.py):
the gathers carry the derivative to the selected elements, the permutations none.
"""
from ...types import INT64, Type
from ..declare import NON_DIFFERENTIABLE, define

define("argsort_rows", lambda t, p, c=None: Type(INT64, 2), "rt.argsort_rows(_0)", kinds={NON_DIFFERENTIABLE})
