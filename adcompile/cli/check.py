"""``adcompile check FILE.py:FUNCTION --args ...``: gradcheck at random inputs, with a verdict.

Every float argument is checked (``--order 2`` adds second derivatives). On failure the worst
mismatch is located: the argument and the index whose derivative (or Hessian entry) differs
most from central finite differences, relative to the tolerance.
"""
import inspect

import numpy as np

from ..api.derived import grad
from ..derivatives.forward import hvp
from ..checks.gradcheck import GradcheckError, gradcheck
from .arg_specs import make_arguments, parse_args_spec, parse_range
from .errors import UsageError

MAX_ELEMENTS = 4096  # elements per argument examined when locating the worst mismatch


def is_float(value):
    return isinstance(value, (float, np.floating)) or (isinstance(value, np.ndarray) and value.dtype.kind == "f")


def run(fn, options, out):
    if options.args is None:
        raise UsageError("check needs --args, e.g. --args \"x=(6,) k=() n=int:5\"")
    low, high = parse_range(options.range)
    defaults = {name: p.default for name, p in inspect.signature(fn.python_function()).parameters.items()
                if p.default is not inspect.Parameter.empty}
    args = make_arguments(parse_args_spec(options.args), fn.param_names,
                          np.random.default_rng(options.seed), low, high, defaults)
    wrt = tuple(k for k, value in enumerate(args) if is_float(value))
    if not wrt:
        raise UsageError(f"{fn.name} has no float argument in --args: nothing to differentiate")
    names = ", ".join(fn.param_names[k] for k in wrt)
    what = "first and second derivatives" if options.order == 2 else "gradient"
    inputs = f"random inputs (seed {options.seed}, floats in [{low:g}, {high:g}))"
    try:
        gradcheck(fn, args, wrt=wrt, order=options.order)
    except GradcheckError as error:
        print(f"FAIL  {fn.name}: {what} with respect to {names} at {inputs}", file=out)
        print(f"  {error}", file=out)
        worst = worst_mismatch(fn, args, wrt, options.order)
        if worst:
            print(f"  worst mismatch: {worst}", file=out)
        return 1
    print(f"PASS  {fn.name}: {what} with respect to {names} match central finite differences "
          f"at {inputs}", file=out)
    return 0


def _step(x):
    single = getattr(x, "dtype", None) == np.float32
    return (1e-3, 2e-2, 1e-3) if single else (1e-6, 1e-5, 1e-7)  # eps, rtol, atol as gradcheck


def _shifted(args, k, index, delta):
    out = list(args)
    if isinstance(args[k], np.ndarray):
        x = args[k].astype(np.float64)
        x[index] += delta
        out[k] = x.astype(args[k].dtype)
    else:
        out[k] = type(args[k])(float(args[k]) + delta)
    return out


def worst_mismatch(fn, args, wrt, order):
    """Text naming the argument and index of the worst mismatch (None if none is found)."""
    gradient = grad(fn, wrt=wrt)
    with np.errstate(all="ignore"):
        analytic = gradient(*args)
        worst = None
        for position, k in enumerate(wrt):
            x = args[k]
            eps, rtol, atol = _step(x)
            indices = list(np.ndindex(*np.shape(x)))[:MAX_ELEMENTS]
            for index in indices:
                plus, minus = _shifted(args, k, index, eps), _shifted(args, k, index, -eps)
                if order == 2:  # a column of the Hessian block of x: differences of the gradient
                    numeric = (np.asarray(gradient(*plus)[position], dtype=float)
                               - np.asarray(gradient(*minus)[position], dtype=float)) / (2 * eps)
                    ours = _hessian_column(fn, args, k, index)
                    entries = [(tuple(i) + tuple(index), ours[i], numeric[i]) for i in np.ndindex(*numeric.shape)]
                else:
                    numeric = (float(np.sum(fn(*plus))) - float(np.sum(fn(*minus)))) / (2 * eps)
                    entries = [(index, float(np.asarray(analytic[position])[index]), numeric)]
                for at, ours_value, numeric_value in entries:
                    excess = abs(ours_value - numeric_value) / (atol * 10 + rtol * 10 * abs(numeric_value))
                    if worst is None or excess > worst[0]:
                        worst = (excess, fn.param_names[k], at, ours_value, numeric_value)
    if worst is None or not worst[0] > 1:
        return None
    _, name, at, ours_value, numeric_value = worst
    where = f"at index {at}" if at else "(a scalar)"
    entry = "Hessian entry" if order == 2 else "derivative"
    return (f"argument '{name}' {where}: {entry} {ours_value!r} (adcompile) vs {numeric_value!r} "
            f"(finite differences), difference {abs(ours_value - numeric_value):.3g}")


def _hessian_column(fn, args, k, index):
    tangents = [None] * len(args)
    e = np.zeros(np.shape(args[k]))
    e[index] = 1.0
    tangents[k] = e if np.ndim(args[k]) else 1.0
    return np.asarray(hvp(fn, tuple(args), tuple(tangents)), dtype=float)
