"""``adcompile.stop_gradient(x)``: ``x``'s value, through which no derivative flows.

Called eagerly (plain Python) it returns ``x`` unchanged. In compiled code (and in functions
given to ``grad``, ``jvp``, ``hessian``, ``vmap`` ...) it is the primitive ``stop_gradient``
(``ir/primitives/arrays/conversions.py``), whose result is never active: its derivative is zero
in every mode and at every order. This module imports nothing: the frontend recognizes the
function by identity (``frontend/custom_functions/stop_gradient.py``).
"""


def stop_gradient(x):
    """``x``, treated as a constant by every derivative: ``grad(lambda x: x * stop_gradient(x))(3.0)``
    is 3.0, not 6.0. Tuples are handled item by item. Outside compiled code it returns ``x``.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x):
    ...     return np.sum(x * adcompile.stop_gradient(x))
    >>> adcompile.grad(f)(np.array([1.0, 2.0]))  # d/dx of x * c, with c = x held constant
    array([1., 2.])
    """
    return x
