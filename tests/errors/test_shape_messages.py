"""Shape errors in the user's terms: the operator of theirs that failed, its operands' source
text and shapes, which axes disagree, and the caret on the operator; never the generated line
or numpy's internals (``gufunc signature (n?,k),(k,m?)``). Forward and gradient, both backends."""
import numpy as np
import pytest

import adcompile
from adcompile.errors import ShapeError

THIS_FILE = __file__


def product_sum(A, B):
    return np.sum(A @ B)


def scaled(u, v):
    return u * 2.0 + v


def through_a_helper(x, y):
    return np.sum(scaled(x, y))


def in_a_loop(x, rows):
    total = 0.0
    for i in range(rows.shape[0]):
        total += np.sum(np.maximum(x, rows[i]) * x)
    return total


def dotted(A, v):
    return np.sum(np.tanh(np.dot(A, v)))


def compared(x, y):
    return np.sum(np.where(x > y, x, y))


def batched(P, Q):
    return np.sum(P @ Q)


def in_a_condition(x, y):
    s = np.sum(x)
    if np.sum(x * y) > 0.0:
        s = s * 2.0
    return s


def caret_column(message):
    """The column the caret points at in the quoted source line of ``message``."""
    lines = message.splitlines()
    caret_row = next(k for k, line in enumerate(lines) if line.strip() == "^")
    return lines[caret_row].index("^") - 4, lines[caret_row - 1][4:]


def assert_told_in_user_terms(message, operator, words):
    assert all(word in message for word in words), message
    assert THIS_FILE in message
    column, quoted = caret_column(message)
    assert quoted[column:].startswith(operator), (quoted, column)
    for internal in ("gufunc", "generated code", "rt.", "_t_", "(n?,k)"):
        assert internal not in message, message


MATMUL_WORDS = ["matmul (@): A has shape (3, 4) and B has shape (5, 2): A's last axis (4) must equal B's first "
                "axis (5)"]


@pytest.mark.parametrize("backend", ["numba", "python"])
@pytest.mark.parametrize("kind", ["forward", "grad"])
def test_a_matmul_mismatch_names_the_operands_and_axes_at_the_operator(backend, kind):
    f = adcompile.compile(product_sum, backend=backend)
    target = f if kind == "forward" else adcompile.grad(f)
    with pytest.raises(ShapeError) as raised:
        target(np.ones((3, 4)), np.ones((5, 2)))
    assert_told_in_user_terms(str(raised.value), "@", MATMUL_WORDS)
    assert str(raised.value).startswith("product_sum: " if kind == "forward" else "grad(product_sum): ")
    assert isinstance(raised.value, ValueError)


@pytest.mark.parametrize("program, args, operator, words", [
    (through_a_helper, (np.ones(3), np.ones(4)), "+",
     ["+: u * 2.0 has shape (3,) and v has shape (4,), which do not broadcast: axis -1 has size 3 in u * 2.0 "
      "and 4 in v"]),
    (in_a_loop, (np.ones(3), np.ones((2, 4))), "np.maximum",
     ["np.maximum: x has shape (3,) and rows[i] has shape (4,), which do not broadcast"]),
    (dotted, (np.ones((2, 3)), np.ones(4)), "np.dot",
     ["np.dot: A has shape (2, 3) and v has shape (4,): A's last axis (3) must equal v's only axis (4)"]),
    (compared, (np.ones(3), np.ones(5)), ">", [">: x has shape (3,) and y has shape (5,), which do not broadcast"]),
    (batched, (np.ones((2, 3, 4)), np.ones((3, 4, 5))), "@",
     ["their leading (batch) axes (2,) and (3,) do not broadcast"]),
    (in_a_condition, (np.ones(3), np.ones(2)), "*", ["*: x has shape (3,) and y has shape (2,)"]),
])
@pytest.mark.parametrize("kind", ["forward", "grad"])
def test_broadcasting_errors_name_the_operator_and_the_axis(program, args, operator, words, kind):
    f = adcompile.compile(program, backend="python")
    target = f if kind == "forward" else adcompile.grad(f)
    with pytest.raises(ShapeError) as raised:
        target(*args)
    assert_told_in_user_terms(str(raised.value), operator, words)


def test_a_broadcasting_error_on_numba_is_told_the_same_way():
    f = adcompile.compile(through_a_helper)
    with pytest.raises(ShapeError) as raised:
        f(np.ones(3), np.ones(4))
    assert_told_in_user_terms(str(raised.value), "+", ["+: u * 2.0 has shape (3,) and v has shape (4,)"])


def test_operands_still_fit_after_a_good_call():
    f = adcompile.grad(adcompile.compile(product_sum, backend="python"))
    A, B = np.arange(12.0).reshape(3, 4), np.ones((4, 2))
    np.testing.assert_allclose(f(A, B), np.ones((3, 2)) @ B.T)  # d sum(A @ B) / dA = 1 B^T
    with pytest.raises(ShapeError):
        f(A, np.ones((5, 2)))
    np.testing.assert_array_equal(A, np.arange(12.0).reshape(3, 4))  # the re-run used copies


def layer_loss(model, X, y):
    return np.mean((model(X)[:, 0] - y) ** 2)


def test_a_mismatch_inside_a_layer_is_told_without_numpys_internals():
    """Where the user's Python is not re-run (a Module argument), numpy's gufunc words are
    still replaced by the axes that disagree."""
    model = adcompile.nn.Linear(4, 2).compile("python")
    with pytest.raises(ShapeError) as raised:
        adcompile.backward(layer_loss, model, np.ones((3, 5)), np.ones(3))
    message = str(raised.value)
    assert "matmul (@): the left operand's last axis (4) must equal the right operand's first axis (5)" in message
    assert "gufunc" not in message and "(n?,k)" not in message
