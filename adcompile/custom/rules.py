"""``adcompile.custom_vjp`` and ``adcompile.custom_jvp``: functions with derivative rules of your
own, in JAX's spelling.

    @adcompile.custom_vjp
    def f(x, y):
        return np.sin(x) * y
    def f_fwd(x, y):
        return f(x, y), (np.cos(x), np.sin(x), y)      # output, residuals
    def f_bwd(res, g):
        cos_x, sin_x, y = res
        return (cos_x * g * y, sin_x * g)               # one cotangent per argument
    f.defvjp(f_fwd, f_bwd)

    @adcompile.custom_jvp
    def h(x):
        return np.log1p(np.exp(x))
    @h.defjvp
    def h_jvp(primals, tangents):
        (x,), (dx,) = primals, tangents
        return h(x), dx / (1.0 + np.exp(-x))            # output, tangent of the output

Called eagerly, ``f(x, y)`` runs the Python function. Called from compiled code (or from a
function given to ``grad``, ``jvp``, ``hessian`` ..., or from a Module's ``forward``) the call is a
region with its own derivative, like a custom ``Function``'s call: ``f_fwd`` is inlined and
``f_bwd`` is the reverse rule (``frontend/custom_functions/custom_rules.py``); for ``custom_jvp``
the rule gives forward mode and, transposed, reverse mode (``derivatives/custom_jvp.py``). The
rules are translated like any other code, so second derivatives differentiate them. Inside the
rules, calling ``f`` itself runs its own code. This module imports nothing.
"""
import functools


class _CustomRule:
    kind = ""

    def __init__(self, fun, nondiff_argnums=()):
        if not callable(fun):
            raise TypeError(f"adcompile.{self.kind} decorates a function, not {type(fun).__name__}")
        if nondiff_argnums:
            raise TypeError(f"adcompile.{self.kind}: nondiff_argnums is not supported; pass such arguments as "
                            "closure constants, or return None as their cotangent")
        self.fun = fun
        functools.update_wrapper(self, fun)

    def __call__(self, *args, **kwargs):
        """Eagerly: the function itself. In compiled code the call is compiled with its rule."""
        return self.fun(*args, **kwargs)

    def __repr__(self):
        return f"<adcompile.{self.kind} {getattr(self.fun, '__name__', 'function')}>"


class custom_vjp(_CustomRule):
    """A function whose reverse-mode derivative is given by ``f.defvjp(fwd, bwd)``: ``fwd`` takes
    the function's arguments and returns ``(output, residuals)``, ``bwd(residuals, g)`` takes the
    cotangent ``g`` of the output (a tuple for a tuple output) and returns a tuple with one
    cotangent per argument (None for none). Forward mode (``jvp``, a Hessian's inner pass)
    differentiates ``fwd``'s own code; ``bwd`` is differentiated for second order.

    >>> import numpy as np, adcompile
    >>> @adcompile.custom_vjp
    ... def clip_gradient(x):
    ...     return x
    >>> def clip_fwd(x):
    ...     return x, ()
    >>> def clip_bwd(res, g):
    ...     return (np.clip(g, -1.0, 1.0),)
    >>> clip_gradient.defvjp(clip_fwd, clip_bwd)
    >>> @adcompile.compile(backend="python")
    ... def loss(x):
    ...     return np.sum(3.0 * clip_gradient(x))
    >>> adcompile.grad(loss)(np.array([1.0, 2.0]))  # 3.0 clipped to 1.0
    array([1., 1.])
    """

    kind = "custom_vjp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        """Set the rule: ``fwd(*args) -> (output, residuals)``, ``bwd(residuals, g) -> cotangents``."""
        if not (callable(fwd) and callable(bwd)):
            raise TypeError("defvjp(fwd, bwd) takes two functions")
        self.fwd, self.bwd = fwd, bwd

    def rule_functions(self):
        return tuple(f for f in (self.fwd, self.bwd) if f is not None)


class custom_jvp(_CustomRule):
    """A function whose forward-mode derivative is given by ``f.defjvp(jvp)`` (usable as a
    decorator): ``jvp(primals, tangents)`` takes two tuples, one entry per argument, and returns
    ``(output, tangent of the output)``, linear in the tangents. Reverse mode transposes it (the
    code ``grad`` runs is the vjp of the rule's tangent map); both are differentiated again for
    second order.

    >>> import numpy as np, adcompile
    >>> @adcompile.custom_jvp
    ... def softplus(x):
    ...     return np.log1p(np.exp(x))
    >>> @softplus.defjvp
    ... def softplus_jvp(primals, tangents):
    ...     (x,), (dx,) = primals, tangents
    ...     return softplus(x), dx / (1.0 + np.exp(-x))
    >>> @adcompile.compile(backend="python")
    ... def loss(x):
    ...     return np.sum(softplus(x))
    >>> adcompile.grad(loss)(np.array([0.0, 800.0]))  # no inf / inf
    array([0.5, 1. ])
    """

    kind = "custom_jvp"

    def __init__(self, fun, nondiff_argnums=()):
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        """Set the rule ``jvp(primals, tangents) -> (output, tangent_out)``; returns ``jvp``."""
        if not callable(jvp):
            raise TypeError("defjvp(jvp) takes a function")
        self.jvp = jvp
        return jvp

    def rule_functions(self):
        return (self.jvp,) if self.jvp is not None else ()


def is_custom_rule(value):
    return isinstance(value, _CustomRule)
