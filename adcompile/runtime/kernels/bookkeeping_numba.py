"""numba versions of the kernels of ``bookkeeping.py`` (reverse-mode bookkeeping and run-time checks).

Importing this module registers, with ``numba.extending.overload``, a nopython implementation of
each function of ``bookkeeping.py``, so that generated code calling ``rt.<name>`` compiles under
``numba.njit``; the loops are small ``njit`` kernels, cached on disk (``numba_support.py``).
"""
import numpy as np
from numba import types
from numba.core.imputils import impl_ret_borrowed
from numba.extending import intrinsic, overload

from . import bookkeeping
from .numba_support import OPTS, fail, grad_dtype, is_array, is_scalar, kernel, np_dtype


@overload(bookkeeping.check_assertion, jit_options=OPTS, prefer_literal=True)
def _ol_check_assertion(condition, message):
    """The message is a string literal of the generated code (or None): raised as a constant."""
    if isinstance(message, types.NoneType) or message is None:
        def impl(condition, message):
            if not condition:
                raise AssertionError()
            return True
        return impl
    if not isinstance(message, types.StringLiteral):
        return fail("check_assertion", condition, message)
    text = message.literal_value

    def impl(condition, message):
        if not condition:
            raise AssertionError(text)
        return True

    return impl


@kernel
def _address_range(start, shape, strides, itemsize):
    """[low, high) of the bytes an array with this start address, shape and strides touches."""
    low, high = start, start + itemsize
    for axis in range(len(shape)):
        reach = (shape[axis] - 1) * strides[axis]
        if reach < 0:
            low += reach
        else:
            high += reach
    return low, high


@overload(bookkeeping.may_share_memory, jit_options=OPTS)
def _ol_may_share_memory(a, b):
    if not (is_array(a) and is_array(b)):
        return fail("may_share_memory", a, b)

    def impl(a, b):
        if a.size == 0 or b.size == 0:
            return False
        a_low, a_high = _address_range(a.ctypes.data, a.shape, a.strides, a.itemsize)
        b_low, b_high = _address_range(b.ctypes.data, b.shape, b.strides, b.itemsize)
        return a_low < b_high and b_low < a_high

    return impl


# ------------------------------------------------------- tapes, counts and casts


@overload(bookkeeping.checkpoint_snapshots, jit_options=OPTS)
def _ol_checkpoint_snapshots(n, requested, state_bytes):
    if not all(isinstance(t, types.Integer) for t in (n, requested, state_bytes)):
        return fail("checkpoint_snapshots", n, requested, state_bytes)
    budget = bookkeeping.SNAPSHOT_BUDGET

    def impl(n, requested, state_bytes):
        if requested == -1:
            wanted = max(np.int64(2), np.int64(budget) // max(np.int64(state_bytes), np.int64(1)))
        elif requested < 1:
            raise ValueError("checkpointed: snapshots must be at least 1")
        else:
            wanted = np.int64(requested)
        return max(np.int64(1), min(wanted, np.int64(n)))

    return impl


@overload(bookkeeping.revolve_advance, jit_options=OPTS)
def _ol_revolve_advance(distance, snapshots):
    if not all(isinstance(t, types.Integer) for t in (distance, snapshots)):
        return fail("revolve_advance", distance, snapshots)

    def impl(distance, snapshots):
        r = np.int64(0)
        beta = np.int64(1)
        while beta < distance:
            r += 1
            beta = beta * (snapshots + r) // r
        fewer_snapshots = beta * snapshots // (snapshots + r)
        two_fewer_reps = np.int64(1)
        if r >= 2:
            two_fewer_reps = beta * r // (snapshots + r) * (r - 1) // (snapshots + r - 1)
        return max(np.int64(1), two_fewer_reps, distance - fewer_snapshots)

    return impl


# A tape's stack pointer stays within its length by construction (``transforms/reverse/taping.py``
# sizes or grows the array before every push; the backward pops what the forward pushed): its
# stores and loads are compiled without numba's bounds check, which the generated function keeps
# for the user's own indices (and which, per access, costs more than the access: the
# determinant-by-cofactors gradient of ``benchmarks/`` runs 15% faster without it on its tapes).
_UNCHECKED = {**OPTS, "boundscheck": False}


@overload(bookkeeping.tape_store, jit_options=_UNCHECKED)
def _ol_tape_store(tape, top, value):
    if not (is_array(tape) and tape.ndim == 1 and isinstance(top, types.Integer)):
        return fail("tape_store", tape, top, value)

    def impl(tape, top, value):
        tape[top] = value

    return impl


@overload(bookkeeping.tape_load, jit_options=_UNCHECKED)
def _ol_tape_load(tape, top):
    if not (is_array(tape) and tape.ndim == 1 and isinstance(top, types.Integer)):
        return fail("tape_load", tape, top)

    def impl(tape, top):
        return tape[top]

    return impl


@overload(bookkeeping.range_len, jit_options=OPTS)
def _ol_range_len(start, stop, step):
    if not all(isinstance(t, types.Integer) for t in (start, stop, step)):
        return fail("range_len", start, stop, step)

    def impl(start, stop, step):
        lo = np.int64(start)
        hi = np.int64(stop)
        st = np.int64(step)
        if st == 0:
            raise ValueError("range() arg 3 must not be zero")
        if st > 0:
            n = (hi - lo + st - 1) // st
        else:
            n = (lo - hi - st - 1) // (-st)
        return n if n > 0 else np.int64(0)

    return impl


@overload(bookkeeping.new_tape, jit_options=OPTS)
def _ol_new_tape(like):
    if is_array(like):
        dt = np_dtype(like)
        shape0 = (0,) * like.ndim

        def impl_array(like):
            # any layout (a reversed slice step gives numba's 'A'), so that a view goes on
            # the tape as the view, as in Python: the backward sweep restores its base
            tape = [np.empty(shape0, dt)[::-1]]
            tape.pop()
            return tape

        return impl_array
    if is_scalar(like):

        def impl_scalar(like):
            tape = [like]
            tape.pop()
            return tape

        return impl_scalar
    return fail("new_tape", like)


@intrinsic
def _typed_writable(typingctx, array):
    """``array`` itself, typed as a writable array (the same view, no copy)."""
    def codegen(context, builder, signature, args):
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])
    return array.copy(readonly=False)(array), codegen


@overload(bookkeeping.push, jit_options=OPTS)
def _ol_push(tape, v):
    if is_array(v) and not v.mutable:
        # numba types a broadcast (np.broadcast_to) read-only, and appending one would turn the
        # tape's type into a list of read-only arrays, which numba cannot cast the tape to. It
        # goes on the tape typed writable: the backward sweep reads what it pops, and never
        # writes into a value the forward could not write into (numpy refuses such writes).
        def impl_read_only(tape, v):
            tape.append(_typed_writable(v))

        return impl_read_only

    def impl(tape, v):
        tape.append(v)

    return impl


@overload(bookkeeping.zeros_like_any, jit_options=OPTS)
def _ol_zeros_like_any(x):
    if is_array(x):
        dt = np_dtype(x)
        return lambda x: np.zeros(x.shape, dt)
    if isinstance(x, (types.Float, types.Complex)):
        zero = np_dtype(x).type(0)
        return lambda x: zero
    if is_scalar(x):
        return lambda x: 0.0
    return fail("zeros_like_any", x)


@overload(bookkeeping.any_layout, jit_options=OPTS)
def _ol_any_layout(x, c_ordered_args=None):
    c_ordered = is_array(c_ordered_args) and c_ordered_args.layout == "C" and is_array(x) and x.layout == "C"
    if is_array(x) and x.ndim >= 1 and x.layout != "A" and not c_ordered:
        return lambda x, c_ordered_args=None: x[::1]  # a view; a slice with a step is typed 'A'
    return lambda x, c_ordered_args=None: x


@overload(bookkeeping.c_ordered_marker, jit_options=OPTS)
def _ol_c_ordered_marker(arrays):
    if all(t.layout == "C" for t in arrays if is_array(t)):
        return lambda arrays: np.empty(0)
    return lambda arrays: np.empty(0)[::1]


@overload(bookkeeping.cast_like, jit_options=OPTS)
def _ol_cast_like(g, x):
    if not (is_scalar(x) or is_array(x)):
        return fail("cast_like", g, x)
    dt = grad_dtype(x)
    ctor = dt.type
    if is_array(g):
        if np_dtype(g) == dt:
            return lambda g, x: g
        return lambda g, x: g.astype(ctor)
    if is_scalar(g):
        return lambda g, x: ctor(g)
    return fail("cast_like", g, x)


@overload(bookkeeping.section_length, jit_options=OPTS)
def _ol_section_length(n, sections):
    def impl(n, sections):
        if sections <= 0 or n % sections:
            raise ValueError("array split does not result in an equal division")
        return n // sections

    return impl
