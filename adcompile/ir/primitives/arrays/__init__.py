"""Primitives that make, shape, index and convert arrays, and the bookkeeping and run-time checks
that reverse mode and the lowering leave in generated code.

Each module declares its primitives with ``define`` (see ``ir/primitives/__init__.py``);
the package imports them in the order of the table.
"""
