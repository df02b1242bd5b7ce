"""The facts the passes read from a declaration hold for the code the primitive is emitted as.

The passes and transforms no longer keep name tables: constant folding asks ``fold``, CSE asks
COMMUTATIVE, the batched scalings SCALING and ADDITIVE, the accumulators' first contributions
OWNED_RESULT and OWNED_LIKE_FIRST, batching AXIS_LENGTHS, the frontend ``reduction_names``. A
declaration that is wrong would make them rewrite a program into another one, so each fact is
checked here against the primitive's own template, evaluated as generated code evaluates it
(numpy, and the runtime kernels as ``rt``), for every primitive that declares it; and the
reductions the frontend takes from the declarations are compiled, on both backends, and their
gradients compared with central differences.
"""
import re

import numpy as np
import pytest

import adcompile
from adcompile.runtime.zero_safe_numpy import python_helpers
from adcompile.ir.primitives import PRIMITIVES, Kind, names_of_kind, template_for
from adcompile.ir.types import F8, type_of_value
from oracles import gradient_by_differences

RNG = np.random.default_rng(7)
NAMESPACE = {"np": np, "rt": python_helpers()}


def evaluate(name, *values, **params):
    """``name``'s template applied to ``values``, as the generated Python computes it."""
    text = template_for(name, [type_of_value(v) for v in values], params)
    for k in reversed(range(len(values))):  # _10 before _1
        text = text.replace(f"_{k}", f"__arg{k}")
    return eval(text, dict(NAMESPACE), {f"__arg{k}": v for k, v in enumerate(values)})  # noqa: S307


def declaring(kind):
    return sorted(names_of_kind(kind))


_CONSTANTS = [(3, 5), (-2, 7), (2.5, -1.25), (0.5, 0.5), (4, 2.0), (0, 3)]
_TRUTHS = [(True, False), (False, False), (True, True), (0, 2), (1.5, 0.0)]


@pytest.mark.parametrize("name", sorted(n for n, spec in PRIMITIVES.items() if spec.fold is not None))
def test_a_fold_computes_what_the_template_computes(name):
    spec = PRIMITIVES[name]
    operands = _TRUTHS if name in ("not", "and", "or") else _CONSTANTS
    for pair in operands:
        values = pair[:spec.arity]
        emitted = evaluate(name, *values)
        folded = spec.fold(*values)
        if spec.is_predicate:
            assert bool(folded) == bool(emitted), (name, values)
        else:
            assert folded == emitted and type(folded) is type(emitted), (name, values, folded, emitted)


def _floats(*shape):
    return RNG.normal(size=shape)


@pytest.mark.parametrize("name", declaring(Kind.COMMUTATIVE))
def test_commutative_primitives_give_the_same_bits_either_way(name):
    for a, b in ((_floats(5), _floats(5)), (_floats(3, 1), _floats(4)), (0.5, _floats(6)), (1.25, -3.5),
                 (_floats(4).astype(np.float32), 0.1)):
        assert np.array_equal(evaluate(name, a, b), evaluate(name, b, a)), (name, a, b)


@pytest.mark.parametrize("name", declaring(Kind.SCALING))
def test_a_scaling_is_linear_in_its_first_argument(name):
    x, y, c = _floats(3, 4), _floats(3, 4), np.abs(_floats(3, 1)) + 0.5
    for coefficient in (c, 2.5):
        together = evaluate(name, x + 3.0 * y, coefficient)
        apart = evaluate(name, x, coefficient) + 3.0 * evaluate(name, y, coefficient)
        np.testing.assert_allclose(together, apart, rtol=1e-13, atol=1e-13)
        np.testing.assert_array_equal(evaluate(name, np.zeros((3, 4)), coefficient), 0.0)


@pytest.mark.parametrize("name", declaring(Kind.ADDITIVE))
def test_an_additive_primitive_adds_or_subtracts(name):
    x, y = _floats(6), _floats(6)
    sign = evaluate(name, 0.0, 1.0)
    assert sign in (1.0, -1.0)
    np.testing.assert_array_equal(evaluate(name, x, y), x + sign * y)


# primitives whose operands are scalars: ``vector`` builds an array of them
_SCALAR_OPERANDS = {"vector": ((1.5, -2.0, 0.25), (np.float64(3.0), 4.0))}


@pytest.mark.parametrize("name", declaring(Kind.OWNED_RESULT))
def test_an_owned_result_is_a_new_writable_array(name):
    arity = PRIMITIVES[name].arity or 2
    other = 2.0 if PRIMITIVES[name].has(Kind.ELEMENTWISE) else _floats(3)  # a scalar, or a matrix-vector product
    x, y = np.abs(_floats(3, 3)) + 0.5, np.abs(_floats(3, 3)) + 0.5  # positive: x ** y is defined
    samples = _SCALAR_OPERANDS.get(name, ((x, y)[:arity], (x, other)[:arity]))
    for args in samples:
        result = evaluate(name, *args)
        assert isinstance(result, np.ndarray) and result.flags.writeable, name
        assert not any(isinstance(a, np.ndarray) and np.shares_memory(result, a) for a in args), name


@pytest.mark.parametrize("name", declaring(Kind.OWNED_LIKE_FIRST))
def test_owned_like_first_is_all_of_the_first_arguments_memory_or_new(name):
    for first, second in ((_floats(3, 4), _floats(3, 4)), (_floats(3, 4), _floats(4)), (_floats(5, 1), _floats(5, 1))):
        result = evaluate(name, first, second) if PRIMITIVES[name].arity != 1 and name != "transpose" \
            else evaluate(name, first)
        assert result.flags.writeable, name
        if np.shares_memory(result, first):
            assert result.size == first.size, f"{name} shares only part of its first argument"
        assert not np.shares_memory(result, second), name


@pytest.mark.parametrize("name", declaring(Kind.AXIS_LENGTHS))
def test_axis_lengths_are_the_arguments(name):
    for lengths in ((4,), (2, 3), (2, 1, 5)):
        result = evaluate(name, *lengths, ndim=len(lengths), dtype=F8.dtype)
        assert result.shape == lengths and result.dtype == np.float64, name
    # ``batching.py`` appends the batch size as one more length
    assert evaluate(name, 2, 3, 7, ndim=3, dtype=F8.dtype).shape == (2, 3, 7)


@pytest.mark.parametrize("name", sorted(n for n, spec in PRIMITIVES.items() if spec.reduction_names))
def test_a_declared_numpy_reduction_is_the_primitive(name):
    x = _floats(3, 4)
    for numpy_name in PRIMITIVES[name].reduction_names:
        np.testing.assert_array_equal(evaluate(name, x), getattr(np, numpy_name)(x))
        for axis in (0, 1):
            np.testing.assert_array_equal(evaluate(name, x, axis=axis), getattr(np, numpy_name)(x, axis=axis))


def reductions(x):
    return (np.sum(np.amax(x, axis=0)) + np.amin(x) + x.max(axis=1, keepdims=True).sum() + np.mean(x.min(axis=0))
            + np.prod(x, axis=1).sum() + x.sum(axis=(0, 1)) + np.mean(x, 1, keepdims=True)[0, 0])


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_reductions_compile_to_the_declared_primitives(backend, dtype):
    x = (RNG.permutation(12).reshape(3, 4) * 0.25 + 0.5).astype(dtype)  # no ties: max/min differentiable
    f = adcompile.compile(reductions, backend=backend)
    tolerance = 1e-4 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(f(x), reductions(x), rtol=tolerance)
    g = adcompile.grad(f)(x)
    assert g.dtype == dtype and g.shape == x.shape
    numeric = gradient_by_differences(reductions, [x.astype(np.float64)])
    np.testing.assert_allclose(g, numeric, rtol=1e-3 if dtype == np.float32 else 1e-6, atol=1e-6)
    called = set(re.findall(r"= (\w+)\(", adcompile.ir(f, x)))
    assert {"max", "min", "prod", "sum", "mean"} <= called, called


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_view_argument_reduces_like_numpy(backend):
    x = (RNG.permutation(48).reshape(4, 12) * 0.125 - 2.0)[:, ::4].T  # a non-contiguous view, no ties
    f = adcompile.compile(reductions, backend=backend)
    np.testing.assert_allclose(f(x), reductions(x), rtol=1e-12)
    numeric = gradient_by_differences(reductions, [x.copy()])
    np.testing.assert_allclose(adcompile.grad(f)(x), numeric, rtol=1e-6, atol=1e-8)
