"""The modes a random program is checked in, and the lowering setting each one needs.

- ``python``: the Python backend, as the generated source runs without the lowering;
- ``lowered``: the Python backend with the numba lowering applied (loop fusion, buffer reuse,
  slice writes as loops): the default path's generated code, run by the interpreter, which
  loads in milliseconds instead of numba's seconds;
- ``numba``: the default backend (the lowering on).

adcompile reads ``ADCOMPILE_FUSE`` when it builds the code of a signature (at a function's first
call with it), so ``lowering(mode)`` sets it for the duration of one program's checks and puts
back what was there: a batch in one mode never leaks its setting into other tests.
"""
import contextlib
import os

MODES = ("python", "lowered", "numba")


def backend_of(mode):
    """The adcompile backend a mode compiles with."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (use one of {', '.join(MODES)})")
    return "numba" if mode == "numba" else "python"


@contextlib.contextmanager
def lowering(mode):
    """``ADCOMPILE_FUSE`` as ``mode`` needs it: "all" (lowered), else not "all" and not "0"
    (numba: the default lowering; python: none), restored afterwards."""
    backend_of(mode)
    previous = os.environ.get("ADCOMPILE_FUSE")
    if mode == "lowered":
        os.environ["ADCOMPILE_FUSE"] = "all"
    else:
        os.environ.pop("ADCOMPILE_FUSE", None)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("ADCOMPILE_FUSE", None)
        else:
            os.environ["ADCOMPILE_FUSE"] = previous
