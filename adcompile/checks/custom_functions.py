"""Checking a custom Function's backward numerically, as PyTorch's ``gradcheck(MyFn.apply, inputs)``
and ``gradgradcheck`` do; ``adcompile.gradcheck``/``gradgradcheck`` call these when given
``MyFn.apply`` (or ``MyFn``).

The backward runs as adcompile compiles it (``MyFn.apply`` called from a small generated
function, differentiated with ``vjp``); finite differences use the eager forward.
"""
import builtins
import hashlib
import importlib.util
import inspect
import sys

import numpy as np

from ..api.compiled import compile
from ..api.derived import grad
from ..backend.loader import cache_dir
from ..backend.names import safe_name
from ..backend.source_files import ensure_source_file
from ..derivatives.forward import hvp
from ..custom.function import function_of  # noqa: F401  (re-exported for testing.py)
from .numeric import FIRST_ORDER, SECOND_ORDER, GradcheckError, check_hessian_vector_products, tolerances
from ..derivatives.pullback import vjp


def input_names(cls, n_args):
    """The names of ``cls.forward``'s inputs (after ctx) for a call with ``n_args`` arguments."""
    names = []
    for param in list(inspect.signature(cls.forward).parameters.values())[1:]:
        if param.kind == param.VAR_POSITIONAL:
            names += [f"{param.name}[{k}]" for k in range(n_args - len(names))]
        else:
            names.append(param.name)
    return names[:n_args]


def check_backward(cls, args, wrt=None, eps=None, rtol=None, atol=None, max_elementwise=64, seed=0,
                   backend="python"):
    """Check ``cls.backward`` against central differences of ``cls.forward``, the way PyTorch's
    ``gradcheck(MyFn.apply, inputs)`` checks a hand-written backward: the vector-Jacobian
    product that compiled code computes with ``backward`` (random cotangents) is compared with
    finite differences of the eager forward, for every float array input (or those in ``wrt``).
    Tolerances are used as given; left out, they take the defaults of ``numeric_checks.py`` for
    each input's precision. Returns True or raises ``GradcheckError`` naming the Function and
    the input."""
    args = list(args)
    names = input_names(cls, len(args))
    if wrt is None:
        wrt = tuple(k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f")
    wrt = tuple(names.index(k) if isinstance(k, str) else k for k in (wrt if isinstance(wrt, tuple) else (wrt,)))
    rng = np.random.default_rng(seed)
    out, pullback = vjp(compile(_apply_wrapper(cls, len(args)), backend=backend), *args, wrt=wrt)
    outs = out if isinstance(out, tuple) else (out,)
    cotangents = tuple(rng.standard_normal(np.shape(o)) if np.ndim(o) else float(rng.standard_normal())
                       for o in outs)
    grads = pullback(*cotangents)

    def weighted(values):
        values = cls.apply(*values)
        values = values if isinstance(values, tuple) else (values,)
        return sum(float(np.sum(c * v)) for c, v in zip(cotangents, values))

    for k in wrt:
        eps_k, rtol_k, atol_k = tolerances(FIRST_ORDER, [args[k]], eps, rtol, atol)
        x = np.asarray(args[k], dtype=np.float64)
        g = np.asarray(grads[k], dtype=np.float64)
        where = f"{cls.__name__}: gradient of input '{names[k]}' (position {k})"
        if g.shape != x.shape:
            raise GradcheckError(f"{where} has shape {g.shape}, the input has shape {x.shape}")
        directions = [np.eye(x.size)[i].reshape(x.shape) for i in range(x.size)] if x.size <= max_elementwise \
            else [rng.standard_normal(x.shape) for _ in range(3)]
        for direction in directions:
            plus, minus = list(args), list(args)
            plus[k], minus[k] = x + eps_k * direction, x - eps_k * direction
            if not isinstance(args[k], np.ndarray):
                plus[k], minus[k] = float(plus[k]), float(minus[k])
            numeric = (weighted(plus) - weighted(minus)) / (2 * eps_k)
            analytic = float(np.sum(g * direction))
            if abs(numeric - analytic) > atol_k + rtol_k * abs(numeric):
                at = f" at index {tuple(int(i) for i in np.unravel_index(int(np.argmax(direction)), x.shape))}" \
                    if x.size <= max_elementwise else " along a random direction"
                raise GradcheckError(f"{where}{at}: backward gives {analytic!r}, finite differences "
                                     f"of forward give {numeric!r} (rtol={rtol_k}, atol={atol_k})")
    return True


_checked_classes = {}  # digest of a wrapper -> the class objects checked with it, in order


def _apply_wrapper(cls, n_inputs, n_weighted=0):
    """A plain function calling ``cls.apply`` on ``n_inputs`` arguments, for adcompile to
    compile; with ``n_weighted`` outputs it takes one weight per output after the inputs and
    returns the scalar sum of weights * outputs. Written to a real file: adcompile reads source."""
    names = [n if n.isidentifier() and n not in ("np", "fn") and not n.startswith("_") else f"a{k}"
             for k, n in enumerate(input_names(cls, n_inputs))]
    inputs = ", ".join(names if len(set(names)) == n_inputs else [f"a{k}" for k in range(n_inputs)])
    name = safe_name(f"{cls.__name__}_apply")  # names a function and a file: never a path
    if n_weighted:
        weights = ", ".join(f"_w{k}" for k in range(n_weighted))
        outputs = "_o" if n_weighted == 1 else ", ".join(f"_o{k}" for k in range(n_weighted))
        terms = " + ".join(f"np.sum(_o{'' if n_weighted == 1 else k} * _w{k})" for k in range(n_weighted))
        body = f"    {outputs} = fn.apply({inputs})\n    return {terms}\n"
        params = f"{inputs}, {weights}"
    else:
        body, params = f"    return fn.apply({inputs})\n", inputs
    source = f'"""Calls {cls.__qualname__}.apply for adcompile\'s checks."""\nimport numpy as np\n\n\n' \
             f"def {name}({params}):\n{body}"
    digest = hashlib.sha256(f"{source}{cls.__module__}.{cls.__qualname__}".encode()).hexdigest()[:16]
    # one module per class object, numbered (not named by id: its name shows in the generated source)
    classes = _checked_classes.setdefault(digest, [])
    if not any(c is cls for c in classes):
        classes.append(cls)
    index = next(k for k, c in enumerate(classes) if c is cls)
    module_name = f"_adcompile_check_{name}_{digest}_{index}"
    module = sys.modules.get(module_name)
    if module is None:
        path = cache_dir() / f"check_{name}_{digest}.py"
        ensure_source_file(path, source)  # written atomically; a wrong or planted file replaced
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        exec(builtins.compile(source, str(path), "exec"), module.__dict__)  # the text checked, not the file reread
        module.fn = cls
        sys.modules[module_name] = module
    return getattr(module, name)


def check_double_backward(cls, args, wrt=None, seed=0, backend="python", eps=None, rtol=None, atol=None,
                          directions=3):
    """Check the derivative of ``cls.backward`` itself (second order through the Function), as
    PyTorch's ``gradgradcheck(MyFn.apply, inputs)``: ``sum(weights * MyFn.apply(*args))`` with
    random weights is checked as ``adcompile.gradgradcheck`` checks a function (Hessian-vector
    products against differences of gradients, both computed with ``backward``)."""
    args = list(args)
    names = input_names(cls, len(args))
    if wrt is None:
        wrt = tuple(k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f")
    wrt = tuple(names.index(k) if isinstance(k, str) else k for k in (wrt if isinstance(wrt, tuple) else (wrt,)))
    outs = cls.apply(*args)
    outs = outs if isinstance(outs, tuple) else (outs,)
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(np.shape(o)) if np.ndim(o) else float(rng.standard_normal()) for o in outs]
    weighted = compile(_apply_wrapper(cls, len(args), len(outs)), backend=backend)
    full = tuple(args) + tuple(weights)
    eps, rtol, atol = tolerances(SECOND_ORDER, [args[k] for k in wrt], eps, rtol, atol)
    try:
        check_hessian_vector_products(lambda tangents: hvp(weighted, full, tangents), grad(weighted, wrt=wrt),
                                      list(full), wrt, weighted.param_names, eps, rtol, atol,
                                      np.random.default_rng(seed), directions)
    except AssertionError as exc:
        raise type(exc)(f"{cls.__name__}: {exc}") from None
    return True
