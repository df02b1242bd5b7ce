"""Primitives that combine many elements: reductions, scans and sorting permutations along an axis,
order statistics, convolution and searchsorted.

Each module declares its primitives with ``define`` (see ``ir/primitives/__init__.py``);
the package imports them in the order of the table.
"""
