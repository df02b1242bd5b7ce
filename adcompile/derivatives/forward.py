"""Forward mode and second order: ``jvp``, ``hvp``, ``hessian``, ``jacobian``.

All of them are built from the two transforms: ``jvp`` is forward mode, ``hvp`` and
``hessian`` are forward mode applied to the reverse-mode gradient (forward over reverse),
``jacobian`` is a loop of vjps (mode="rev") of unit vectors, or (mode="fwd", and ``hessian``)
one jvp with all unit tangents at once, batched (a loop of jvps where it cannot be batched). ``hessian``
and ``jacobian`` return derived functions like ``grad`` does (``matrix_ir.py`` builds their
IR), so they can be compiled, inspected, called in compiled code and differentiated again.
"""
import numpy as np

from ..boundary import api_boundary
from ..api.derived import DEFAULT_WRT, DerivedFunction, wrt_or_argnums
from ..api.derived_cache import compiled_function, derived_function
from ..errors import CallError
from ..api.directions import outputs_and_tangents
from ..module_compiler.function_forms import flat_base, flat_tangents, tangents_by_argument


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _bind_primals(compiled, primals, tangents, what):
    """``primals`` with defaults filled in as a call fills them: they may stop before arguments
    that have defaults, which get the tangent None (not differentiated)."""
    if len(primals) != len(tangents):
        raise CallError(f"{what}: {len(primals)} primals but {len(tangents)} tangents (use None for "
                        "arguments that are not differentiated)")
    bound = compiled.call_arguments(primals)
    return bound, tangents + (None,) * (len(bound) - len(primals))


@api_boundary
def jvp(f, primals, tangents):
    """JAX-style forward mode: ``(f(*primals), J @ tangents)``.

    ``tangents`` has one entry per primal; use None for arguments that are not differentiated
    (integer arguments must get None). Arguments with defaults may be left out of ``primals``
    (and ``tangents``): they take their defaults, as in a call, and are not differentiated.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x, c):
    ...     return c * np.sin(x)
    >>> x = np.array([0.0, np.pi])
    >>> out, tangent = adcompile.jvp(f, (x, 2.0), (np.array([1.0, 1.0]), None))  # c cos(x) dx
    >>> tangent
    array([ 2., -2.])
    """
    compiled = compiled_function(f)
    primals, tangents = _bind_primals(compiled, _as_tuple(primals), _as_tuple(tangents), "jvp")
    call = flat_base(compiled, primals)  # Modules, pytrees: their leaves
    wrt, extra = flat_tangents("jvp", primals, tangents, call.positions, compiled.param_names)
    derived = derived_function(call.function, "jvp", wrt)
    result = derived.call_with_extra(call.args, extra)
    return outputs_and_tangents(call.function, derived.call_signature(call.args), result, call.results_tree())


@api_boundary
def hvp(f, primals, tangents):
    """Hessian-vector product H @ v of scalar ``f`` without forming H (forward over reverse).

    ``tangents`` has one entry per primal (None where not differentiated); returns H·v for the
    arguments that have tangents (a single array if only one, else a tuple). Arguments with
    defaults may be left out, as in ``jvp``.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x):
    ...     return np.sum(x ** 3)
    >>> adcompile.hvp(f, (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))  # H = diag(6 x)
    array([6., 0.])
    """
    compiled = compiled_function(f)
    quick = _quick_hvp(compiled, primals, tangents)
    if quick is not None:
        return quick
    primals, tangents = _bind_primals(compiled, _as_tuple(primals), _as_tuple(tangents), "hvp")
    call = flat_base(compiled, primals)  # Modules, pytrees: their leaves
    positions = call.positions
    wrt, extra = flat_tangents("hvp", primals, tangents, positions, compiled.param_names)
    # the tangents of the gradient, without the gradient itself
    product = derived_function(derived_function(call.function, "grad", wrt), "jvp", wrt, tangents_only=True)
    result = product.call_with_extra(call.args, extra)
    if positions is None and wrt == (0,) and len(primals) == 1:  # the product and plan of the quick path
        plan = product.known_plan(call.args)
        if plan is not None:
            compiled.__dict__["_hvp_quick"] = (product, plan, _quick_key(primals[0]))
    return tangents_by_argument(primals, tangents, positions, result if isinstance(result, tuple) else (result,))


def _quick_key(x):
    return (x.dtype, x.ndim) if type(x) is np.ndarray else None


def _quick_hvp(compiled, primals, tangents):
    """``hvp`` of the call an optimiser makes in a loop -- one array argument and its tangent,
    of its shape and dtype, and of the dtype and rank of the last call through the general
    path -- in fewer steps (each step of the general path costs a fraction of a microsecond,
    the product itself a few); None for any other call."""
    quick = compiled.__dict__.get("_hvp_quick")
    if quick is None or type(primals) is not tuple or type(tangents) is not tuple or len(primals) != 1 \
            or len(tangents) != 1:
        return None
    x, t = primals[0], tangents[0]
    product, plan, key = quick
    if type(t) is not np.ndarray or _quick_key(x) != key or t.shape != x.shape or t.dtype is not x.dtype:
        return None
    return product.run_plan(plan, primals, tangents)[0]


def hessian(f, wrt=DEFAULT_WRT, *, argnums=None, has_aux=False):
    """A function computing the Hessian of scalar ``f`` with respect to argument ``wrt``
    (``argnums=``, JAX's name, also), shape ``x.shape + x.shape`` (forward over reverse: one jvp
    of the gradient with all unit tangents at once, or a generated loop with one jvp per column
    where the jvp cannot be batched). It takes ``f``'s arguments as ``f`` does (keywords,
    defaults) and is a derived function like ``grad(f)``: ``adcompile.source`` shows it,
    compiled code can call it, and every transform applies to it (``jacobian(hessian(f))`` is
    the third derivative). With respect to a dict of arrays it is, as JAX's, a dict of dicts,
    ``H["a"]["b"]`` of shape ``a.shape + b.shape`` (a tuple of tuples for a tuple), assembled
    from one jvp of the gradient per column: called from Python, not differentiated again.
    With ``has_aux=True`` (as JAX's), ``f`` returns ``(value, aux)``: the result is ``(H, aux)``.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x):
    ...     return x[0] ** 2 * x[1]
    >>> adcompile.hessian(f)(np.array([1.0, 3.0]))
    array([[6., 2.],
           [2., 0.]])
    >>> H = adcompile.hessian(lambda p: p["a"] ** 2 * p["b"])({"a": 1.0, "b": 3.0})
    >>> float(H["a"]["a"]), float(H["a"]["b"]), float(H["b"]["b"])  # a dict of dicts, as JAX's
    (6.0, 2.0, 0.0)
    """
    wrt = wrt_or_argnums("hessian", wrt, argnums)
    return DerivedFunction(f, "hessian", _single_wrt(f, wrt, "hessian"), has_aux=has_aux)


def jacobian(f, wrt=DEFAULT_WRT, mode="rev", *, argnums=None, has_aux=False):
    """A function computing the Jacobian of ``f`` (array-valued) with respect to argument
    ``wrt`` (``argnums=``, JAX's name, also), shape ``out.shape + x.shape``. ``jacrev(f)`` and
    ``jacfwd(f)`` are its two modes. ``mode`` is "rev" (a generated loop with one vjp per output
    element) or "fwd" (one jvp with all unit tangents at once, or a loop of one jvp per input
    element where it cannot be batched; "rev" of a derived function that reverse mode does not
    take is computed this way too). It takes ``f``'s arguments as ``f`` does (keywords,
    defaults) and is a derived function like ``grad(f)``: it can be inspected, called in
    compiled code and differentiated again. With ``has_aux=True`` (as JAX's), ``f`` returns
    ``(out, aux)``, aux any value or pytree carried along: the result is ``(J, aux)``. As JAX's,
    with respect to a dict of arrays it is a dict of such arrays, and for ``f`` returning a dict
    or tuple of arrays it has the output's structure (``J["y"]["W"]`` of shape
    ``y.shape + W.shape``); those are assembled from one vjp per row (or jvp per column) when
    called, so they are not differentiated again.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x):
    ...     return np.array([x[0] * x[1], x[0] + 2.0 * x[1], x[1] ** 2])
    >>> adcompile.jacobian(f)(np.array([2.0, 3.0]))  # 3 outputs, 2 inputs
    array([[3., 2.],
           [1., 2.],
           [0., 6.]])
    >>> adcompile.jacobian(f, mode="fwd")(np.array([2.0, 3.0])).shape
    (3, 2)
    >>> @adcompile.compile(backend="python")
    ... def parts(x):
    ...     return {"product": x[0] * x[1], "squares": x ** 2}
    >>> jac = adcompile.jacobian(parts)(np.array([2.0, 3.0]))  # the output's structure
    >>> jac["product"], jac["squares"]
    (array([3., 2.]), array([[4., 0.],
           [0., 6.]]))
    """
    if mode not in ("rev", "fwd"):
        raise CallError("jacobian: mode must be 'rev' or 'fwd'")
    wrt = wrt_or_argnums("jacobian", wrt, argnums)
    return DerivedFunction(f, "jacobian", _single_wrt(f, wrt, "jacobian"), mode=mode, has_aux=has_aux)


def jacrev(f, wrt=DEFAULT_WRT, *, argnums=None, has_aux=False):
    """JAX's ``jacrev``: ``jacobian(f, wrt, mode="rev")`` (``argnums=`` another name of ``wrt``).

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x):
    ...     return x ** 2
    >>> adcompile.jacrev(f)(np.array([1.0, 3.0]))
    array([[2., 0.],
           [0., 6.]])
    """
    return jacobian(f, wrt_or_argnums("jacrev", wrt, argnums), mode="rev", has_aux=has_aux)


def jacfwd(f, wrt=DEFAULT_WRT, *, argnums=None, has_aux=False):
    """JAX's ``jacfwd``: ``jacobian(f, wrt, mode="fwd")`` (``argnums=`` another name of ``wrt``).

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(params):
    ...     return params["a"] * params["b"]
    >>> jac = adcompile.jacfwd(f)({"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])})
    >>> jac["a"]  # a dict like the argument: d out / d a
    array([[3., 0.],
           [0., 4.]])
    """
    return jacobian(f, wrt_or_argnums("jacfwd", wrt, argnums), mode="fwd", has_aux=has_aux)


def _single_wrt(f, wrt, what):
    if isinstance(wrt, (tuple, list)):
        raise CallError(f"{what}: wrt must be a single argument")
    return wrt


__all__ = ["jvp", "hvp", "hessian", "jacobian"]
