"""numba's function ids drawn at random, so that machine code cached by different processes
never shares a symbol name between different bodies.

numba names a compiled function by its qualified name, its argument types and an id that
``numba.core.bytecode.FunctionIdentity`` counts from 1 in every process. Functions of one
qualified name and argument types can have different bodies: the closures a factory makes (the
runtime's ``*_axis`` overloads are five closures of one ``impl``, one per reduction). In one
process their ids differ; in two processes they are the same numbers. Machine code from the disk
cache carries those names, and when code compiled by two processes meets in a third (a generated
function calling two cached helpers), LLVM keeps one body for the shared name and both calls run
it: silently wrong results (numba issue 10486; ``np.max`` along an axis summed instead).

The invariant: a symbol name identifies one body across every process that writes the cache.
The ids are 128 random bits (collision probability about n**2 / 2**129 for n functions), drawn
from the operating system in every process, forked ones included (they share no state to
repeat). Cache entries compiled before this change carry counted ids: ``CACHE_FORMAT`` is part
of every cache key the backend reads (``backend/numba_cache.py``), so they are never loaded.
"""
import os
import threading

CACHE_FORMAT = "random function ids 1"

_lock = threading.Lock()


class _RandomIds:
    """An endless iterator of random 128-bit ids (what numba calls ``next`` on)."""

    def __iter__(self):
        return self

    def __next__(self):
        return int.from_bytes(os.urandom(16), "little")


def make_function_ids_unique():
    """Have numba draw function ids at random (idempotent; call before numba compiles anything
    that may be cached)."""
    from numba.core.bytecode import FunctionIdentity  # lazy: numba takes ~0.3 s to import
    with _lock:
        if not isinstance(FunctionIdentity._unique_ids, _RandomIds):
            FunctionIdentity._unique_ids = _RandomIds()
