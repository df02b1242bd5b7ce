"""The lowering applied to IR emitted for numba, and the numba options it asks for.

Fusion is on by default for the numba backend; ``adcompile.compile(f, fuse=False)`` or the
environment variable ``ADCOMPILE_FUSE=0`` keep one numpy call per statement (for debugging).
Whole-array writes of elementwise expressions (an optimizer's ``param[:, :] = param - lr * d_p``)
become loops writing each element first (``slice_writes.py``); fusion then groups the rest.
The Python backend is never fused: explicit loops run slowly in the interpreter (except with
``ADCOMPILE_FUSE=all``, for testing fusion with the backend that loads fast). After fusion, the
buffers the loops allocate take the memory of dead temporaries of the same shape
(``buffer_reuse.py``), and an adjoint's zeros made in every iteration of a loop take the memory of
the previous iteration's when that is dead (``iteration_buffers.py``); ``ADCOMPILE_REUSE=0``
turns both off. Before that, a function that writes
into no argument leaves the unfused statements behind its loops' run-time checks out of its
code (``deferred_fallbacks.py``): where a check fails, the call reruns with the unfused code, and
``lowered.defers_unfused_code`` says so, and buffers only the unfused code read are dropped
(``unread_buffers.py``). Then repeated updates of one array element in a loop body (reverse
mode's ``bx[i] += a; ...; bx[i] += b``) read it once into a scalar and write it once
(``repeated_increments.py``; ``ADCOMPILE_MERGE_INCREMENTS=0`` turns it off). Last, arrays
carried around a loop that may change layout enter it as ``rt.any_layout(v)``, so that numba
gives them one type (``loop_layouts.py``), and exponentials in loops that vectorise call the
exp LLVM can vectorise (``vectorised_exp.py``).
"""
import os

from ..ir.clone import copy_function
from ..ir.shapes import infer_shapes
from .buffer_reuse import reuse_buffers
from .deferred_fallbacks import defer_unfused_fallbacks
from .fusion import fuse_loops
from .iteration_buffers import reuse_across_iterations, would_reuse
from .loop_layouts import with_stable_loop_layouts
from .repeated_increments import find_runs, merge_repeated_increments, merging_enabled
from .slice_writes import write_slices_as_loops
from .unread_buffers import drop_unread_buffers
from .vectorised_exp import use_vectorised_exponentials


def fusion_enabled(fuse):
    """``fuse`` (the compile option) if given, else whether ``ADCOMPILE_FUSE`` allows it."""
    return fuse if fuse is not None else os.environ.get("ADCOMPILE_FUSE", "1") != "0"


def lower_for_backend(fn, backend, fuse=None, parallel=False):
    """(IR to generate code from, numba options) for ``fn`` compiled with ``backend``. (Every
    generated function, fused or not, gets numba's numpy error model from ``backend/loader.py``.)
    Code for numba, fused or not, has arrays carried around loops in one layout
    (``loop_layouts.py``)."""
    code, options = _fused_for_backend(fn, backend, fuse, parallel)
    if backend == "numba":
        code = with_stable_loop_layouts(code, in_place=code is not fn)  # a lowered copy is the lowering's own
        code = use_vectorised_exponentials(code)
    return code, options


def _fused_for_backend(fn, backend, fuse, parallel):
    fuse_python = os.environ.get("ADCOMPILE_FUSE") == "all"
    if (backend != "numba" and not fuse_python) or not fusion_enabled(fuse):
        return fn, {}
    written = copy_function(fn)
    writes = write_slices_as_loops(written, infer_shapes(written))
    source = written if writes else fn
    shapes = infer_shapes(source)
    lowered, loops = fuse_loops(source, lambda _: shapes, parallel=parallel)
    loops += writes
    if loops:
        lowered.defers_unfused_code = defer_unfused_fallbacks(lowered)
        drop_unread_buffers(lowered)  # the fallbacks' reads have left with them
    code = lowered if loops else fn
    if os.environ.get("ADCOMPILE_REUSE", "1") != "0":
        if loops:
            reuse_buffers(lowered, shapes)  # fuse_loops copied source: its variables, and so their shapes, are source's
        if would_reuse(code):
            code = code if loops else copy_function(fn)
            reuse_across_iterations(code)
    if merging_enabled() and (code is not fn or find_runs(fn)):
        code = code if code is not fn else copy_function(fn)  # the user's loops only: fn is not the lowering's
        merge_repeated_increments(code)
    return code, {"parallel": True} if parallel and loops and backend == "numba" else {}
