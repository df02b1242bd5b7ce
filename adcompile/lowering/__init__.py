"""Lowering of differentiated, simplified IR for the numba backend (never differentiated again).

``fuse_loops`` turns runs of statements over one iteration domain into explicit loop nests
(``fusion.py``: grouping and dependences; ``roles.py``: what each statement becomes;
``domains.py``: loop bounds and indexing; ``loops.py``: writing the nest).
"""
from .fusion import fuse_loops
from .loops import ParallelFor

__all__ = ["ParallelFor", "fuse_loops"]
