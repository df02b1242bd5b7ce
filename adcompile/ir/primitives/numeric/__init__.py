"""Primitives that are functions of numbers, applied element by element: arithmetic, comparisons and logic, numpy's
elementwise functions, the special functions of scipy.special.

Each module declares its primitives with ``define`` (see ``ir/primitives/__init__.py``);
the package imports them in the order of the table.
"""
