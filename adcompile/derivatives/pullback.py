"""``vjp``: the output now, and a pullback that runs only the backward sweep later.

``vjp(f, *args)`` runs the forward half of ``f``'s vjp (``pullback_split.py``), which returns
the outputs and the residuals: the values the backward sweep reads. The pullback keeps them
and runs the backward half with each cotangent, without running ``f`` again. If the backward
sweep consumes what it reads (pops tapes, puts back overwritten elements), the residuals
serve one call, and a second call runs the forward half again first.
"""

import numpy as np

from ..boundary import api_boundary
from ..api.specialised import Specialised
from ..api.directions import cotangent_leaves
from ..backend.returned_tapes import tapes_for_numba
from ..backend.tiers import NUMBA
from ..api.derived_cache import compiled_function, derived_function
from ..module_compiler.function_forms import flat_base, vjp_wrt
from ..transforms.pullback_split import split_pullback
from ..transforms.arguments import written_arguments
from ..tree import leaves as tree_leaves


class PullbackHalf(Specialised):
    """The forward or the backward half of a vjp, compiled like any derived function."""

    def __init__(self, derived, half):
        super().__init__()
        self.derived, self.half = derived, half
        self.base = derived
        self.backend = derived.backend
        self.tiered = derived.tiered
        self.name = f"{derived.name}.{half}"
        self.param_names = derived.param_names
        self._splits = {}

    def origin(self):
        return f"{self.half} half of {self.derived.origin()}"

    def check_arity(self, args):
        self.derived.check_arity(args)

    def python_function(self):
        return self.derived.python_function()

    def primal_ir(self, sig):
        return self.derived.primal_ir(sig)

    def signature(self, args):
        return self.derived.signature(args)

    def split(self, sig):
        if sig not in self._splits:
            fn_ir = self.derived.ir(sig)
            self._splits[sig] = split_pullback(fn_ir, len(self.derived.base.ir(sig).results))
        return self._splits[sig]

    def ir(self, sig):
        return getattr(self.split(sig), self.half)


def halves_of(derived):
    """The forward and backward halves of vjp function ``derived``, made once and kept on it."""
    halves = derived.__dict__.get("_pullback_halves")
    if halves is None:
        with derived._lock:
            halves = derived.__dict__.get("_pullback_halves")
            if halves is None:
                forward_half, backward_half = PullbackHalf(derived, "forward"), PullbackHalf(derived, "backward")
                backward_half._splits = forward_half._splits
                halves = derived._pullback_halves = (forward_half, backward_half)
    return halves


class Pullback:
    """What ``vjp`` returns with the output: ``pullback(cotangent)`` gives one cotangent per
    argument of ``f`` (None for the arguments not differentiated). ``derived`` is the vjp
    function, whose code ``adcompile.source`` shows."""

    def __init__(self, derived, args, finish=None, outputs=None):
        self.derived = derived
        self.args = args
        self.finish = finish  # the gradients in the user's terms (a Module's a dict), from the flat ones
        self.outputs = outputs  # the structure of the user's output over the flat outputs (a flattened call)
        self.sig = derived.signature(args)
        base = derived.base
        self.base_ir = base.ir(self.sig)
        self.wrt = derived.resolved_wrt(self.sig)
        self.forward_half, self.backward_half = halves_of(derived)
        self.split = self.forward_half.split(self.sig)
        self.residuals = None

    def __repr__(self):
        return f"<adcompile pullback of {self.derived.base.name}>"

    def run_forward(self):
        """The output as ``f`` returns it; keeps the residuals."""
        if self.split is None:  # like every derived function, leave the caller's arrays as they were
            written = set(written_arguments(self.derived.primal_ir(self.sig)))
            params = self.derived.primal_ir(self.sig).params
            out = self.derived.base(*(arg.copy() if param in written else arg
                                      for arg, param in zip(self.args, params)))
            return out if self.outputs is None else self.outputs.unflatten(tree_leaves(out))
        result = self.forward_half.run(self.args)
        n_out = self.split.n_outputs
        outputs, self.residuals = result[:n_out], tuple(result[n_out:])
        # an output array that is also a residual is copied (the caller may write into it);
        # a scalar is immutable (a loop that never runs returns its start, ``0.0``, as both)
        outputs = tuple(out.copy() if isinstance(out, np.ndarray) and any(out is r for r in self.residuals)
                        else out for out in outputs)
        if self.outputs is not None:
            return self.outputs.unflatten(outputs)
        raw = outputs if self.base_ir.returns_tuple else outputs[0]
        return self.derived.base.finisher(self.sig, self.base_ir)(raw)

    @api_boundary
    def __call__(self, *cotangents):
        cotangents = cotangent_leaves(self.base_ir, cotangents, self.outputs)
        if self.split is None:
            grads = self.derived.call_with_extra(self.args, cotangents)[len(cotangents):]
        else:
            if self.residuals is None:  # the last backward run consumed them
                self.run_forward()
            residuals = self.residuals
            if self.derived.backend == NUMBA:
                backward = self.split.backward
                residuals = tapes_for_numba(residuals, backward.params[len(self.args):], backward)
            grads = self.backward_half.run(self.args, residuals + cotangents)
            if self.split.consumes_residuals:
                self.residuals = None
        if self.finish is not None:
            return self.finish(tuple(grads))
        by_position = dict(zip(self.wrt, grads))
        return tuple(by_position.get(k) for k in range(len(self.args)))


@api_boundary
def vjp(f, *args, wrt=None, **kwargs):
    """JAX-style ``(out, pullback)``: ``out = f(*args)``, and ``pullback(cotangent)`` returns
    ``cotangent @ J`` for each argument: a tuple with one entry per argument of ``f``, None
    for the arguments not differentiated (those not in ``wrt``, or, without ``wrt``, those that
    are not floats). A tuple output takes a tuple of cotangents, one per output. ``f`` runs
    once: the pullback keeps the values its backward sweep needs. Keyword arguments and
    defaults of ``f`` bind as in a call of ``f``.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def scaled_squares(x, c, n):
    ...     return c * x ** n
    >>> out, pullback = adcompile.vjp(scaled_squares, np.array([1.0, 3.0]), 2.0, 2)
    >>> out
    array([ 2., 18.])
    >>> dx, dc, dn = pullback(np.array([1.0, 1.0]))  # ct * 2 c x, sum(ct * x ** 2), and n is an int
    >>> dx, float(dc), dn
    (array([ 4., 12.]), 10.0, None)
    """
    compiled = compiled_function(f)
    user_args = compiled.call_arguments(args, kwargs)  # keywords and defaults bound as a call binds them
    call = flat_base(compiled, user_args)  # Modules, pytrees: their leaves
    flat_wrt, finish = vjp_wrt(compiled, user_args, call.positions, wrt)
    derived = derived_function(call.function, "vjp", flat_wrt)
    derived._last_signature = derived.signature(call.args)
    pullback = Pullback(derived, call.args, finish, call.results_tree())
    return pullback.run_forward(), pullback


__all__ = ["vjp", "Pullback"]
