"""Python's and numpy's run-time checks kept in compiled code, on every backend and tier.

- ``assert test, message`` raises ``AssertionError(message)`` when ``test`` is false, in the
  function and in its derivatives (the check is not differentiated);
- a write into a read-only argument raises numpy's ``ValueError: assignment destination is
  read-only``, naming the line of the write;
- an integer index out of range raises ``IndexError`` with numpy's words and the user's line
  (numba compiles with bounds checks unless ``compile(f, boundscheck=False)``).

Each program runs on numba (the default, lowering on) and as Python, forward and gradient;
where it does not raise, its value is compared with running it as Python and its gradient
with central differences.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adcompile
from adcompile.errors import TypeMismatchError

BACKENDS = ["numba", "python"]
THIS_FILE = os.path.basename(__file__)
GOOD = np.array([0.5, 1.5, 2.0])
BAD = np.array([0.5, -1.5, 2.0])


def positive_log(x):
    assert np.all(x > 0), "x must be positive"
    return np.sum(np.log(x) * x)


def bounded_steps(x, n):
    s = 0.0
    for i in range(n):
        assert x[i] < 10.0
        s = s + x[i] * x[i]
    return s


def formatted_message(x):
    assert x[0] > 0.0, f"x[0] = {x[0]} is not positive"
    return np.sum(x * x)


def _notes(error):
    return "\n".join(getattr(error, "__notes__", []))


def _transforms(compiled):
    return [("forward", compiled), ("grad", adcompile.grad(compiled, wrt=0))]


@pytest.mark.parametrize("backend", BACKENDS)
def test_assert_raises_with_its_message_in_function_and_gradient(backend):
    compiled = adcompile.compile(positive_log, backend=backend)
    np.testing.assert_allclose(compiled(GOOD), positive_log(GOOD), rtol=1e-12)
    adcompile.gradcheck(compiled, (GOOD,))
    for what, fn in _transforms(compiled):
        with pytest.raises(AssertionError) as raised:
            fn(BAD.copy())
        assert raised.value.args == ("x must be positive",), what
        notes = _notes(raised.value)
        assert THIS_FILE in notes and 'assert np.all(x > 0), "x must be positive"' in notes, (what, notes)


@pytest.mark.parametrize("backend", BACKENDS)
def test_assert_in_a_loop_without_message(backend):
    compiled = adcompile.compile(bounded_steps, backend=backend)
    x = np.array([1.0, 2.0, 30.0])
    assert compiled(x, 2) == bounded_steps(x, 2)
    adcompile.gradcheck(compiled, (x, 2), wrt=0)
    assert compiled(x, 0) == 0.0  # a zero-trip loop checks nothing
    for what, fn in _transforms(compiled):
        with pytest.raises(AssertionError) as raised:
            fn(x, 3)
        assert raised.value.args == (), what  # as Python's `assert test` raises it


def test_assert_in_hessian_and_value_and_grad():
    compiled = adcompile.compile(positive_log)
    np.testing.assert_allclose(adcompile.hessian(compiled)(GOOD), np.diag(1.0 / GOOD), rtol=1e-10)
    for fn in (adcompile.hessian(compiled), adcompile.value_and_grad(compiled)):
        with pytest.raises(AssertionError, match="x must be positive"):
            fn(BAD)


@pytest.mark.parametrize("backend", BACKENDS)
def test_assert_in_vmap_and_vjp(backend):
    """vmap checks every member's test; vjp's forward pass checks it."""
    compiled = adcompile.compile(positive_log, backend=backend)
    batch = np.stack([GOOD, GOOD * 2.0])
    np.testing.assert_allclose(adcompile.vmap(compiled)(batch), [positive_log(GOOD), positive_log(GOOD * 2.0)])
    with pytest.raises(AssertionError, match="x must be positive"):
        adcompile.vmap(compiled)(np.stack([GOOD, BAD]))
    out, pullback = adcompile.vjp(compiled, GOOD)
    np.testing.assert_allclose(pullback(1.0)[0], np.log(GOOD) + 1.0, rtol=1e-12)
    with pytest.raises(AssertionError, match="x must be positive"):
        adcompile.vjp(compiled, BAD)


def test_assert_in_the_python_tier():
    """The first call of tiered code runs the generated Python while numba compiles."""
    compiled = adcompile.compile(positive_log, tiered=True)
    with pytest.raises(AssertionError, match="x must be positive"):
        compiled(BAD)
    assert compiled.tier(BAD, wait=True) == "numba"
    with pytest.raises(AssertionError, match="x must be positive"):
        compiled(BAD)


def test_assert_message_that_is_not_a_literal_is_its_source_text():
    compiled = adcompile.compile(formatted_message, backend="python")
    with pytest.raises(AssertionError) as raised:
        compiled(np.array([-1.0, 2.0]))
    assert raised.value.args == ("f'x[0] = {x[0]} is not positive'",)


def array_assertion(x):
    assert x > 0
    return np.sum(x)


def test_assert_of_an_array_is_a_located_error():
    with pytest.raises(TypeMismatchError, match="truth value of an array is ambiguous") as raised:
        adcompile.compile(array_assertion, backend="python")(GOOD)
    assert THIS_FILE in str(raised.value) and "assert x > 0" in str(raised.value)


def test_assert_is_off_under_python_optimize(tmp_path):
    """As Python's own asserts are under ``python -O``."""
    program = tmp_path / "optimized.py"
    program.write_text(textwrap.dedent("""
        import numpy as np, adcompile

        def f(x):
            assert np.all(x > 0), "x must be positive"
            return np.sum(x)

        print(adcompile.compile(f, backend="python")(np.array([-1.0, 2.0])))
    """))
    package_root = os.path.dirname(os.path.dirname(adcompile.__file__))
    env = {**os.environ, "PYTHONPATH": package_root,
           "ADCOMPILE_CACHE_DIR": str(tmp_path / "cache")}
    run = subprocess.run([sys.executable, "-O", str(program)], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "1.0"


# ---------------------------------------------------------------- read-only arguments
def write_first(x):
    x[0] = 2.0
    return np.sum(x * x)


def write_through_view(x, y):
    v = y[1:]
    v[0] = 3.0
    return np.sum(x * y)


def read_only(values):
    x = np.array(values, dtype=np.float64)
    x.setflags(write=False)
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_into_read_only_argument_raises_numpys_error(backend):
    compiled = adcompile.compile(write_first, backend=backend)
    for what, fn in _transforms(compiled):
        with pytest.raises(ValueError, match="^assignment destination is read-only") as raised:
            fn(read_only([1.0, 2.0, 3.0]))
        assert THIS_FILE in str(raised.value) and "x[0] = 2.0" in str(raised.value), what
    x = np.array([1.0, 2.0, 3.0])
    expected_x = x.copy()
    expected = write_first(expected_x)
    assert compiled(x) == expected
    np.testing.assert_array_equal(x, expected_x)  # the caller's array is written, as in Python
    adcompile.gradcheck(compiled, (np.array([1.0, 2.0, 3.0]),))


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_through_a_view_of_a_read_only_argument(backend):
    compiled = adcompile.compile(write_through_view, backend=backend)
    with pytest.raises(ValueError, match="assignment destination is read-only") as raised:
        compiled(np.ones(3), read_only([1.0, 2.0, 3.0]))
    assert "'y'" in str(raised.value) and "v[0] = 3.0" in str(raised.value)
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        compiled(np.ones(3), np.broadcast_to(np.ones(1), (3,)))
    # the argument it does not write may be read-only
    y = np.array([1.0, 2.0, 3.0])
    assert compiled(read_only([1.0, 1.0, 1.0]), y) == write_through_view(np.ones(3), np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_argument_of_a_function_that_does_not_write_it(backend):
    compiled = adcompile.compile(positive_log, backend=backend)
    x = read_only(GOOD)
    np.testing.assert_allclose(compiled(x), positive_log(GOOD), rtol=1e-12)
    np.testing.assert_allclose(adcompile.grad(compiled)(x), np.log(GOOD) + 1.0, rtol=1e-12)


# ---------------------------------------------------------------- indices out of range
def constant_index(x):
    return x[10] * 2.0 + x[-1]


def loop_index(x, n):
    s = 0.0
    for i in range(n):
        s = s + x[i] ** 2
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_constant_index_out_of_range_raises_index_error(backend):
    compiled = adcompile.compile(constant_index, backend=backend)
    for what, fn in _transforms(compiled):
        with pytest.raises(IndexError, match="index 10 is out of bounds for axis 0 with size 5") as raised:
            fn(np.ones(5))
        assert THIS_FILE in _notes(raised.value) and "return x[10] * 2.0 + x[-1]" in _notes(raised.value), what
    x = np.arange(12.0)
    assert compiled(x) == constant_index(x)  # negative indices count from the end
    adcompile.gradcheck(compiled, (x,))


@pytest.mark.parametrize("backend", BACKENDS)
def test_loop_index_out_of_range_raises_index_error(backend):
    compiled = adcompile.compile(loop_index, backend=backend)
    x = np.array([0.5, -1.0, 2.0])
    for what, fn in _transforms(compiled):
        with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 3") as raised:
            fn(x, 4)
        assert "s = s + x[i] ** 2" in _notes(raised.value), what
    assert compiled(x, 3) == loop_index(x, 3)
    adcompile.gradcheck(compiled, (x, 3), wrt=0)


def _numba_options(fn, *args):
    """The numba options the generated code of ``fn`` for ``args`` was compiled with."""
    return fn.specialization(fn.signature(args))[2].targetoptions


def test_boundscheck_opt_out():
    x = np.array([0.5, -1.0, 2.0])
    checked, unchecked = adcompile.compile(loop_index), adcompile.compile(loop_index, boundscheck=False)
    assert unchecked(x, 3) == checked(x, 3) == loop_index(x, 3)
    np.testing.assert_array_equal(adcompile.grad(unchecked, wrt=0)(x, 3), 2 * x)
    assert _numba_options(checked, x, 3)["boundscheck"] is True
    assert _numba_options(unchecked, x, 3)["boundscheck"] is False
    assert _numba_options(adcompile.grad(unchecked, wrt=0), x, 3)["boundscheck"] is False  # inherited
    # unchecked code has a source, so a file and a numba cache, of its own, which says so
    assert "boundscheck=False" in adcompile.source(unchecked, x, 3, stage="lowered")  # numba's file
    assert "boundscheck" not in adcompile.source(checked, x, 3)
    assert adcompile.source(unchecked, x, 3).split("\n", 1)[1] == adcompile.source(checked, x, 3).split("\n", 1)[1]


def test_python_backend_checks_indices_whatever_boundscheck_says():
    compiled = adcompile.compile(loop_index, backend="python", boundscheck=False)
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        compiled(np.ones(3), 4)
    assert "boundscheck" not in adcompile.source(compiled)
