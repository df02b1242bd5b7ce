"""Reverse-mode bookkeeping and run-time checks, as plain numpy.

The kernels: range_len, new_tape, push, tape_store, tape_load, zeros_like_any, cast_like, section_length,
check_assertion, UnfusedCodeNeeded, may_share_memory, any_layout, c_ordered_marker, and the checkpointed loops'
checkpoint_snapshots and revolve_advance.

Generated code calls these as ``rt.<name>`` (``runtime/helpers.py`` gathers them); run as Python
it calls these, compiled by numba the overloads of ``bookkeeping_numba.py`` beside this file. Each
docstring is the contract both follow. This module does not import numba.
"""
import operator

import numpy as np

from .broadcasting import grad_dtype


def check_assertion(condition, message):
    """The user's ``assert condition, message``: raise ``AssertionError(message)`` (without
    arguments when ``message`` is None) if ``condition`` is false; else True."""
    if not condition:
        raise AssertionError() if message is None else AssertionError(message)
    return True


class UnfusedCodeNeeded(Exception):
    """Raised by generated code whose fused loop found shapes it does not handle (operands that
    broadcast, an empty reduction) where the unfused statements were left out of it: the caller
    (``backend/unfused_fallback.py``) reruns the call with the unfused code. Such code writes
    into no argument, so nothing of the abandoned run is seen (``lowering/deferred_fallbacks.py``)."""


def may_share_memory(a, b):
    """Whether the memory of arrays ``a`` and ``b`` may overlap (their address ranges do).

    A loop that writes ``a`` element by element while reading ``b`` runs only when they
    cannot (``lowering/slice_writes.py``); numpy's ``may_share_memory``, which numba lacks.
    """
    return bool(np.may_share_memory(a, b))


def section_length(n, sections):
    """``n // sections``, the length of each part of ``np.split(x, sections)`` along an axis
    of length ``n``; ValueError when ``n`` is not divisible (as numpy's np.split)."""
    if sections <= 0 or n % sections:
        raise ValueError("array split does not result in an equal division")
    return n // sections


def range_len(start, stop, step):
    """``len(range(start, stop, step))``; ValueError if ``step == 0``."""
    return len(range(operator.index(start), operator.index(stop), operator.index(step)))


# The number of bytes of snapshots a checkpointed loop with snapshots=None may keep.
SNAPSHOT_BUDGET = 64 * 2 ** 20


def checkpoint_snapshots(n, requested, state_bytes):
    """The number of snapshots of a checkpointed loop of ``n`` iterations: ``requested`` (at
    least 1) or, when ``requested`` is -1 (``snapshots=None``), as many states of
    ``state_bytes`` bytes as fit in ``SNAPSHOT_BUDGET`` (64 MiB), at least 2; never more than
    ``n`` (nor less than 1). ValueError for a ``requested`` below 1 (other than -1)."""
    if requested == -1:
        wanted = max(2, SNAPSHOT_BUDGET // max(state_bytes, 1))
    elif requested < 1:
        raise ValueError("checkpointed: snapshots must be at least 1")
    else:
        wanted = requested
    return max(1, min(wanted, n))


def revolve_advance(distance, snapshots):
    """How many steps to advance from a snapshot before storing the next one, when
    ``distance`` steps (at least 2) are to be reversed from it with ``snapshots`` snapshots
    (that one included, at least 2), in the fewest recomputed steps (Griewank and Walther's
    binomial schedule): with ``beta(s, r) = C(s + r, s)`` and ``r`` the least with
    ``beta(s, r) >= distance``, the least optimal advance ``max(beta(s, r - 2),
    distance - beta(s - 1, r))``."""
    r = 0
    beta = 1  # beta(snapshots, r)
    while beta < distance:
        r += 1
        beta = beta * (snapshots + r) // r
    fewer_snapshots = beta * snapshots // (snapshots + r)  # beta(snapshots - 1, r)
    two_fewer_reps = 1
    if r >= 2:
        two_fewer_reps = beta * r // (snapshots + r) * (r - 1) // (snapshots + r - 1)
    return max(1, two_fewer_reps, distance - fewer_snapshots)


def new_tape(like):
    """New empty tape (a list used as a stack) for values of ``like``'s type.

    ``like`` is a scalar (float, int, bool) or an array; only its type
    matters.  In numba the element type is: the scalar's type, or an array
    of ``like``'s dtype and ndim in any layout.  Push values with
    :func:`push`; pop with ``tape.pop()``.
    """
    return []


def push(tape, v):
    """Push ``v`` onto a tape made by :func:`new_tape`; returns None.

    Values go on the tape as they are, views included, on both backends: the
    reverse sweep relies on it (it restores a view's base before it reads
    the view).  This is not a snapshot: if ``v`` is mutated in place later
    and not restored, push a copy.
    """
    tape.append(v)


def tape_store(tape, top, value):
    """``tape[top] = value`` for an array tape with a stack pointer (``ir/nodes.TapeArray``),
    whose ``top`` is within its length by construction: compiled without a bounds check."""
    tape[top] = value


def tape_load(tape, top):
    """``tape[top]``, the value a ``tape_store`` put there: compiled without a bounds check."""
    return tape[top]


def zeros_like_any(x):
    """Zero gradient for ``x``.

    Array: new ``np.zeros(x.shape, x.dtype)`` (the same dtype, even for ints).
    Scalar: ``0`` of ``x``'s dtype when ``x`` is a float/complex (a numpy
    float32 scalar gives ``np.float32(0)``), otherwise ``0.0`` (float64).
    """
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=x.dtype)
    if isinstance(x, (np.floating, np.complexfloating)):
        return x.dtype.type(0)
    if isinstance(x, complex):
        return 0j
    return 0.0


def any_layout(x, c_ordered_args=None):
    """``x`` itself. Compiled by numba, an array becomes a view of it typed with the layout 'A'
    (any strides), the layout an array carried around a loop may take in a later iteration
    (``lowering/loop_layouts.py``) -- unless ``c_ordered_args``, a ``c_ordered_marker``, says the
    function's array arguments are 'C' and ``x`` is 'C' too: it stays as it is."""
    return x


def c_ordered_marker(arrays):
    """Whether the arrays of the tuple ``arrays`` (a function's array arguments, as it was
    called) are all 'C'-ordered, for ``any_layout``: compiled by numba, the answer is in the
    type of the result (an empty array typed 'C' or 'A'), known when numba compiles the caller."""
    return all(a.flags.c_contiguous for a in arrays)


def cast_like(g, x):
    """``g`` converted to the gradient dtype of ``x``.

    That is ``x``'s dtype when floating/complex (a float32 ``x`` keeps a
    float32 gradient), else float64.  A scalar ``g`` gives a numpy scalar, an
    array ``g`` an array (``g`` itself when its dtype already matches).
    """
    dt = grad_dtype(x)
    if isinstance(g, np.ndarray):
        return g.astype(dt, copy=False)
    return dt.type(g)


__all__ = ["check_assertion", "UnfusedCodeNeeded", "may_share_memory", "section_length", "range_len", "new_tape", "push",
           "tape_store", "tape_load",
           "checkpoint_snapshots", "revolve_advance",
           "zeros_like_any", "cast_like", "any_layout", "c_ordered_marker"]
