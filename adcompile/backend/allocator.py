"""glibc's allocator keeps the memory of freed arrays of up to 32 MiB for the next ones, in every
process that runs compiled code, as it does after numba compiled something.

Why: glibc gives an allocation of at least ``M_MMAP_THRESHOLD`` bytes pages of its own
(``mmap``) and returns them at ``free``; the next allocation of that size faults its pages in
again, one by one. The threshold starts at 128 KiB and rises, up to 32 MiB, to the size of each
such block freed; the memory at the top of the heap is returned once it exceeds
``M_TRIM_THRESHOLD``, twice the threshold. A process in which numba compiled a function has
freed LLVM's large blocks, so its thresholds are high and a gradient's tapes and buffers (a
few hundred KiB to a few MiB per call) are reused from the heap; a process that loaded the same
machine code from the disk cache has freed nothing large, and each call faults its pages in
again. Measured on the determinants by cofactors (the gradient allocates 1.5 MiB of tapes per
call): 0.72 ms per gradient in the process that compiled it, 1.37 ms in the next one loading
it from the cache, 0.72 ms there with these settings. A warm cache must never be slower than a
cold one, so the first numba-backend function a process loads sets the thresholds glibc would
have reached: 32 MiB, and 64 MiB at the top of the heap.

What it costs: up to 64 MiB of freed memory stays with the process instead of the system, as
in a process that compiled. Nothing changes on other C libraries (musl, macOS, Windows: no
``mallopt``), where the user set glibc's own settings (``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_``, ``GLIBC_TUNABLES``), or with ``ADCOMPILE_KEEP_FREED_MEMORY=0``.
"""
import ctypes
import os
import sys
import threading

M_TRIM_THRESHOLD = -1  # glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024  # glibc's largest dynamic threshold on 64-bit systems
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD  # as glibc sets it when it raises the threshold

_USER_SETTINGS = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")
_lock = threading.Lock()
_state = None  # None: not tried yet; else the reason it was or was not set (``state()``)


def _glibc_mallopt():
    """glibc's ``mallopt``, or None on another C library."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018  (glibc only)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return mallopt


def keep_freed_memory():
    """Set glibc's thresholds once per process (see the module's docstring); returns ``state()``."""
    global _state
    with _lock:
        if _state is None:
            _state = _apply()
        return _state


def _apply():
    if os.environ.get("ADCOMPILE_KEEP_FREED_MEMORY", "1") == "0":
        return "off: ADCOMPILE_KEEP_FREED_MEMORY=0"
    chosen = [name for name in _USER_SETTINGS if name in os.environ]
    if chosen:
        return f"off: the user's {chosen[0]} is kept"
    mallopt = _glibc_mallopt()
    if mallopt is None:
        return "off: not glibc"
    if not (mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD)):
        return "off: mallopt refused"
    return "on"


def state():
    """"on", "off: <why>", or None before the first numba-backend function was loaded."""
    return _state
