"""Lowering of differentiated, simplified IR for the numba backend (never differentiated again).

``fuse_loops`` turns runs of statements over one iteration domain into explicit loop nests
(``fusion.py``: grouping and dependences; ``roles.py``: what each statement becomes;
``domains.py``: loop bounds and indexing; ``assumptions.py``: lengths assumed equal behind a
run-time check; ``views.py``: arrays with inserted or broadcast axes read through their source;
``shape_reads.py``: shape-only reads moved onto arrays in memory; ``varying_lengths.py``:
lengths that vary over a loop, read where the fused loop runs; ``loops.py``: writing the
nest). ``pipeline.py`` applies it to the code
emitted for numba.
"""
from .fusion import fuse_loops
from .loops import ParallelFor

__all__ = ["ParallelFor", "fuse_loops"]
