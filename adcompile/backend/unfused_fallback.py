"""Calls of code whose fused loops left their unfused fallback out: rerun with the unfused code.

``lowering/deferred_fallbacks.py`` leaves the unfused statements behind a fused loop's run-time
check out of a function that writes into no argument; where the check fails, the code raises
``UnfusedCodeNeeded`` and :class:`WithUnfusedFallback` runs the same call with the function's
unfused code, loaded (compiled, for numba) at that first need. The abandoned run wrote nothing
the caller sees, so the result is the unfused code's, as if it had run alone.

An exception the unfused code raises (the user's shapes do not broadcast, an assert) carries the
unfused callable as ``ADCOMPILE_CODE_THAT_RAN``, so that the error is explained from the file
that ran (``api/run_errors.py``).
"""
from ..runtime.kernels.bookkeeping import UnfusedCodeNeeded

CODE_THAT_RAN = "ADCOMPILE_CODE_THAT_RAN"


class WithUnfusedFallback:
    """``fused`` (a callable: numba's dispatcher, a tiered function, generated Python), falling
    back to ``load_unfused()``'s callable for a call whose shapes the fused loops do not handle.
    Other attributes (``py_func``, ``tier``) are ``fused``'s."""

    def __init__(self, fused, load_unfused):
        self.fused, self.load_unfused = fused, load_unfused

    def __call__(self, *args):
        try:
            return self.fused(*args)
        except UnfusedCodeNeeded:
            pass  # rerun outside the handler: an error of the unfused code is not "during" this one
        unfused = self.load_unfused()  # the loader keeps it: compiled once per process
        try:
            return unfused(*args)
        except Exception as error:
            try:
                setattr(error, CODE_THAT_RAN, unfused)
            except (AttributeError, TypeError):
                pass
            raise

    def __getattr__(self, name):
        if name in ("fused", "load_unfused"):  # not set yet (a copy being made)
            raise AttributeError(name)
        return getattr(self.fused, name)


def code_that_raised(compiled, error):
    """The callable whose run raised ``error`` in a call of ``compiled``."""
    return getattr(error, CODE_THAT_RAN, compiled)
