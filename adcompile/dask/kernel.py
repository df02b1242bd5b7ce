"""A portable compiled kernel: the generated source of a derivative, shipped to Dask workers.

The client builds the derivative for the blocks' signature (dtype and ndim of each argument,
not their shapes) and ships only what a worker needs to run it: the generated module's source
text, the function's name, the backend and the hidden values (module-level constants the
function reads), and the unfused source where the fused loops left their fallback out of it
(``lowering/deferred_fallbacks.py``). The user's function itself never travels, so it need not
be importable on the workers (only adcompile must be installed there), and anything the
frontend cannot compile is an ``AdCompileError`` raised on the client before any task is sent.

On a worker, ``Kernel.function()`` goes through the ordinary backend loader: the generated
file is written to the worker's cache folder and compiled once per process (numba's disk cache
makes the next process's first call cheap).
"""
import pickle

from ..backend.loader import load
from ..backend.unfused_fallback import WithUnfusedFallback
from ..errors import CallError


class Kernel:
    """``source`` defines ``name(*args, *hidden, *extra)``; everything in it pickles plainly."""

    def __init__(self, source, name, backend, hidden, label, unfused_source=None):
        self.source, self.name, self.backend = source, name, backend
        self.hidden = tuple(hidden)
        self.label = label  # the user's function, for messages
        self.unfused_source = unfused_source  # where the fused loops leave their fallback out

    def function(self):
        fused = load(self.source, self.name, self.backend)  # cached per process by the loader
        if self.unfused_source is None:
            return fused
        return WithUnfusedFallback(fused, lambda: load(self.unfused_source, self.name, self.backend))

    def __call__(self, args, extra=()):
        result = self.function()(*args, *self.hidden, *extra)
        return result if isinstance(result, tuple) else (result,)

    def __repr__(self):
        return f"<adcompile.dask kernel {self.label} ({self.backend})>"


def build_kernel(derived, example_args, label):
    """The Kernel of ``derived`` (a DerivedFunction, or a FlatFunction's) for the signature of
    ``example_args`` (numpy stand-ins with the blocks' dtype and ndim)."""
    sig = derived.signature(example_args)
    fn_ir, source, _ = derived.specialization(sig)  # compiles nothing: numba runs on first call
    hidden = tuple(getattr(derived.primal_ir(sig), "hidden_values", ()))
    deferred = getattr(derived.lowered_ir(sig), "defers_unfused_code", False)
    kernel = Kernel(source, fn_ir.name, derived.backend, hidden, label,
                    derived.unfused_source(fn_ir) if deferred else None)
    check_shippable(kernel)
    return kernel


def check_shippable(kernel):
    """Raise a CallError (an AdCompileError) if the kernel cannot be sent to a worker."""
    for value in kernel.hidden:
        try:
            pickle.dumps(value)
        except Exception as error:
            raise CallError(f"adcompile.dask: {kernel.label} reads a global value of type "
                            f"{type(value).__name__} that cannot be sent to Dask workers ({error}); "
                            "pass it as an argument or make it a numpy array or number") from None
