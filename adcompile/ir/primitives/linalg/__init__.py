"""Linear algebra primitives: products, solves and determinants, decompositions.

Each module declares its primitives with ``define`` (see ``ir/primitives/__init__.py``);
the package imports them in the order of the table.
"""
