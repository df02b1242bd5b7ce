"""Second derivatives of every rule, from the same table as the first-order checks.

For each entry of ``test_rules.CASES`` (float64), and of ``F32_CASES`` in float32 too:

* reverse rules, differentiated: the Hessian-vector product of the scalar loss
  ``sum(sin(op(*args)))`` computed by adcompile (forward mode over reverse mode) against
  central differences of adcompile's own gradient along the same direction (the gradient
  itself is checked against finite differences of the function in ``test_rules.py``);
* forward rules, differentiated: ``directional(*args, *u) = J(args) u``, a compiled function
  calling ``adcompile.jvp`` of the op (inlined), is differentiated by forward mode again
  (forward over forward) along ``w``, against a central difference of the same compiled
  ``directional`` along ``w`` (its values are the first-order forward check of test_rules.py).

Results are compared through a random cotangent: ``|<v, a> - <v, n>| <= rtol * max(|<v, a>|,
|<v, n>|) + atol * sum|v * a|``. float64: step 1e-5, rtol 1e-4, atol 1e-6 (gradgradcheck's own
check, elementwise). float32: step 1e-3 (rounding of the f32 values, ~6e-8 relative, divided
by the step, stays under 1e-4), rtol 2e-3, atol 1e-4. All scaled by the entry's ``rtol`` factor.
"""
import importlib.util

import numpy as np
import pytest

import adcompile
from oracles import assert_close_through
from test_rules import CASES, F32_CASES, compiled

TOLERANCES = {np.float64: (1e-5, 1e-4, 1e-6), np.float32: (1e-3, 2e-3, 1e-4)}  # step, rtol, atol
BOTH_DTYPES = [pytest.param(c, np.float64, id=f"{c.name}-f64") for c in CASES] + \
    [pytest.param(c, np.float32, id=f"{c.name}-f32") for c in F32_CASES]


def _float_positions(args):
    return tuple(k for k, a in enumerate(args)
                 if isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


@pytest.mark.parametrize("entry", CASES, ids=repr)
def test_second_derivative_float64(entry):
    args = entry.args()
    positions = _float_positions(args)
    if not positions:
        pytest.fail(f"{entry.name} has no float argument")
    _, fn = compiled(entry.name, "python", True)
    assert adcompile.gradgradcheck(fn, args, wrt=positions, rtol=1e-4 * entry.rtol,
                                   atol=1e-6 * entry.rtol, directions=2)


@pytest.mark.parametrize("entry", F32_CASES, ids=repr)
def test_second_derivative_float32(entry):
    """hvp at float32 points (``gradgradcheck`` would move them to float64)."""
    dtype = np.float32
    args = entry.args(dtype)
    positions = _float_positions(args)
    rng = np.random.default_rng(7)
    v = [_random_like(args[k], rng, dtype) for k in positions]
    _, loss = compiled(entry.name, "python", True)
    analytic = adcompile.hvp(loss, tuple(args), _tangents(len(args), positions, v))
    gradient = adcompile.grad(loss, wrt=positions)
    step = TOLERANCES[dtype][0]
    plus = _flat(gradient(*_shifted(args, positions, v, step, dtype)))
    minus = _flat(gradient(*_shifted(args, positions, v, -step, dtype)))
    _assert_close_through_cotangent(analytic, (plus - minus) / (2 * step), entry, dtype, rng, "hvp")


@pytest.fixture(scope="module")
def wrapper_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("wrappers")


def compiled_directional(entry, positions, folder):
    """A compiled ``directional(*args, *u)`` returning the op's tangent ``J u`` by calling
    ``adcompile.jvp`` inside compiled code (inlined, so forward mode differentiates the forward
    rules' own code). adcompile needs the source of what it compiles: the wrapper is written to
    a file and imported; the compiled op it calls is a global of that module."""
    names = [f"a{k}" for k in range(len(entry.gens))]
    tangents = [f"u{k}" if k in positions else "None" for k in range(len(names))]
    module_name = f"directional_{entry.name}"
    path = folder / f"{module_name}.py"
    path.write_text("import adcompile\n\n\n"
                    f"def directional({', '.join(names + [f'u{k}' for k in positions])}):\n"
                    f"    return adcompile.jvp(op, ({', '.join(names)},), ({', '.join(tangents)},))[1]\n")
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.op = compiled(entry.name, "python", False)[1]
    return adcompile.compile(module.directional, backend="python")


@pytest.mark.parametrize("entry, dtype", BOTH_DTYPES)
def test_forward_over_forward(entry, dtype, wrapper_folder):
    args = entry.args(dtype)
    positions = _float_positions(args)
    directional = compiled_directional(entry, positions, wrapper_folder)
    rng = np.random.default_rng(5)
    u = [_random_like(args[k], rng, dtype) for k in positions]
    w = [_random_like(args[k], rng, dtype) for k in positions]
    _, analytic = adcompile.jvp(directional, tuple(args) + tuple(u),
                                _tangents(len(args), positions, w) + (None,) * len(u))
    step = TOLERANCES[dtype][0]
    plus = _flat(directional(*_shifted(args, positions, w, step, dtype), *u))
    minus = _flat(directional(*_shifted(args, positions, w, -step, dtype), *u))
    _assert_close_through_cotangent(analytic, (plus - minus) / (2 * step), entry, dtype, rng,
                                    "forward over forward")


# ----------------------------------------------------------------------------- helpers
def _random_like(value, rng, dtype):
    if np.ndim(value):
        return rng.standard_normal(np.shape(value)).astype(dtype)
    return float(rng.standard_normal()) if dtype is np.float64 else dtype(rng.standard_normal())


def _tangents(n_args, positions, directions):
    tangents = [None] * n_args
    for k, d in zip(positions, directions):
        tangents[k] = d
    return tuple(tangents)


def _shifted(args, positions, directions, step, dtype):
    """The arguments moved by ``step * direction``, kept in ``dtype`` (float32 points stay
    float32, so that the same specialization is differentiated)."""
    out = list(args)
    for k, d in zip(positions, directions):
        moved = np.asarray(args[k], dtype=np.float64) + step * np.asarray(d, dtype=np.float64)
        out[k] = moved.astype(dtype) if np.ndim(moved) else (float(moved) if dtype is np.float64 else dtype(moved))
    return out


def _flat(values):
    parts = values if isinstance(values, tuple) else (values,)
    return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64)) for p in parts])


def _assert_close_through_cotangent(analytic, numeric, entry, dtype, rng, what):
    analytic = _flat(analytic)
    assert analytic.shape == numeric.shape, f"{entry.name} {what}: shape {analytic.shape} != {numeric.shape}"
    _, rtol, atol = TOLERANCES[dtype]
    v = rng.standard_normal(numeric.shape)
    assert_close_through(v, analytic, numeric, rtol * entry.rtol, atol * entry.rtol,
                         f"{entry.name} ({np.dtype(dtype).name}): {what}")
