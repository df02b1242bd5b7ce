"""Adjoint hygiene of reverse mode (issue 11, item 3): the generated gradient combines the
contributions of an argument used twice by one operation, assigns an adjoint's first
contribution instead of zero-filling and adding, and keeps no adjoint for inactive values.
Each source pattern is checked together with the gradient, against finite differences."""
import numpy as np
import pytest

import adcompile
from adcompile.ir.nodes import Assign, For, Function, Var, const
from adcompile.ir.types import Type
from adcompile.passes.first_contribution import assign_first_contributions
from oracles import hessian_by_differences


def python(f):
    return adcompile.compile(f, backend="python")


def grad_source(f, *args, wrt=0):
    return adcompile.source(adcompile.grad(python(f), wrt=wrt), *args)


def backward_lines(source):
    return source.split("# backward", 1)[1].splitlines()


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def rosenbrock_gradient(x):
    g = np.zeros_like(x)
    t = x[1:] - x[:-1] ** 2
    g[:-1] = -400.0 * t * x[:-1] - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * t
    return g


X = np.random.default_rng(3).standard_normal(9)


def test_rosenbrock_adjoints_are_assigned_once_and_accumulated_once():
    lines = backward_lines(grad_source(rosenbrock, X))
    zero_fills = [line for line in lines if "zeros_like" in line]
    assert zero_fills == ["    bx = np.zeros_like(x)"]
    # into part of bx, contributions stay accumulations: loop fusion merges them into one loop
    assert not any(line.strip().startswith("bx[:-1] = ") for line in lines)
    for name in ("bt_3", "bt_7"):
        assert sum(line.strip().startswith(name + " = ") for line in lines) == 1
        assert not any(line.strip().startswith(name + " += ") for line in lines)
    np.testing.assert_allclose(adcompile.grad(python(rosenbrock))(X), rosenbrock_gradient(X), rtol=1e-12)
    assert adcompile.gradcheck(python(rosenbrock), (X,))


def square_sum(x):
    y = np.sin(x)
    return np.sum(y * y)


def test_a_product_of_a_value_with_itself_gives_one_contribution():
    lines = backward_lines(grad_source(square_sum, X))
    assert sum("2.0 *" in line for line in lines) == 1
    assert not any("+=" in line for line in lines)
    assert adcompile.gradcheck(python(square_sum), (X,))


def times_itself(x):
    return np.sum(np.cos(x * x))


def plus_itself(x):
    return np.sum(np.cos(x + x))


def minus_itself(x):
    return np.sum(np.cos(x - x + x))


def over_itself(x):
    return np.sum(np.cos(x / x + x))


def cube(x):
    return np.sum(np.cos(x * x * x))


def maximum_with_itself(x):
    return np.sum(np.cos(np.maximum(x, x)))


def hypot_with_itself(x):
    return np.sum(np.cos(np.hypot(x, x)))


@pytest.mark.parametrize("f", [times_itself, plus_itself, minus_itself, over_itself, cube,
                               maximum_with_itself, hypot_with_itself], ids=lambda f: f.__name__)
def test_repeated_arguments_elementwise(f):
    assert adcompile.gradcheck(python(f), (np.abs(X) + 0.5,))


def test_repeated_arguments_of_a_matrix_product():
    def f(a):
        return np.sum(np.tanh(a @ a))
    a = np.random.default_rng(4).standard_normal((4, 4)) * 0.5
    assert adcompile.gradcheck(python(f), (a,))
    assert adcompile.gradcheck(python(f), (a,), order=2)


def test_repeated_arguments_broadcast_along_another_operand():
    def f(x, m):
        y = x * x + m          # x broadcast along m's rows, after the product
        return np.sum(y * y)
    m = np.random.default_rng(5).standard_normal((3, 9))
    assert adcompile.gradcheck(python(f), (X, m))


def loop_of_squares(x, n):
    s = x
    for i in range(n):
        s = 0.5 * s * s + x
    return np.sum(s)


def test_loops_keep_the_adjoint_across_iterations():
    # in the loop body the adjoint of s is reset each iteration: by its first contribution
    assert "zeros_like(s)" not in grad_source(loop_of_squares, X, 4)
    assert adcompile.gradcheck(python(loop_of_squares), (X * 0.3, 4), wrt=0)
    assert adcompile.gradcheck(python(loop_of_squares), (X * 0.3, 4), wrt=0, order=2)


def scalar_loop(a, n):
    total = 0.0
    for i in range(n):
        t = a * a
        total = total * 0.9 + t * t
    return total


def test_scalar_adjoints_in_a_loop_assign_their_first_contribution():
    source = grad_source(scalar_loop, 0.7, 5)
    assert adcompile.gradcheck(python(scalar_loop), (0.7, 5), wrt=0, order=2)
    body = backward_lines(source)
    assert not any(line.strip() in ("bt = 0.0", "btotal = 0.0") for line in body)


def branches(x, flag):
    y = x * 2.0
    if flag > 0:
        z = y * y
    else:
        z = np.sin(y) + y
    return np.sum(z * x)


@pytest.mark.parametrize("flag", [1, -1])
def test_branches(flag):
    assert adcompile.gradcheck(python(branches), (X, flag), wrt=0)


def in_place(x):
    y = np.cos(x)
    y[1:] = y[1:] * y[:-1]
    y[0] = x[0] * x[0]
    return np.sum(y * y)


def test_in_place_writes():
    assert adcompile.gradcheck(python(in_place), (X,))
    assert adcompile.gradcheck(python(in_place), (X,), order=2)


def test_a_slice_first_accumulated_into_stays_an_accumulation():
    def f(x):
        return np.sum(np.exp(x[2:]) * 3.0)
    lines = backward_lines(grad_source(f, X))
    assert any(line.strip().startswith("bx[2:] += ") for line in lines)
    assert adcompile.gradcheck(python(f), (X,))


def test_repeated_index_is_still_accumulated():
    def f(x, idx):
        return np.sum(np.sin(x[idx]))
    idx = np.array([0, 2, 2, 5])
    assert "scatter_add" in grad_source(f, X, idx)
    assert adcompile.gradcheck(python(f), (X, idx), wrt=0)


def test_an_assigned_contribution_shared_with_another_adjoint_is_copied():
    def f(x, w):
        s = x + w            # both adjoints get the same cotangent
        return np.sum(np.sin(s)) + np.sum(x * w)
    w = np.cos(X)
    assert adcompile.gradcheck(python(f), (X, w))
    gx, gw = adcompile.grad(python(f), wrt=(0, 1))(X, w)
    assert not np.shares_memory(gx, gw)


def test_hessian_of_rosenbrock():
    h = adcompile.hessian(python(rosenbrock))(X)
    numeric = hessian_by_differences(rosenbrock_gradient, (X,), eps=1e-5)
    np.testing.assert_allclose(h, numeric.T, rtol=1e-6, atol=1e-5)


def test_float32():
    x = X.astype(np.float32)
    g = adcompile.grad(python(rosenbrock))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, rosenbrock_gradient(X), rtol=1e-4, atol=1e-3)
    assert adcompile.gradcheck(python(square_sum), (x,))


def test_inactive_values_get_no_adjoint():
    def f(x, c):
        k = np.exp(c) * 2.0          # depends only on c, which is not differentiated
        return np.sum(np.sin(x) * k)
    c = np.linspace(0.0, 1.0, X.size)
    source = grad_source(f, X, c, wrt=0)
    assert "bc" not in source and "bk" not in source
    assert adcompile.gradcheck(python(f), (X, c), wrt=0)


def loop_accumulating(compute_inside):
    """IR of `for i in range(n): b = zeros_like(x); b += g; b += x` with `g = sin(x)` computed
    before the loop or inside it, before the zero fill."""
    vector, integer = Type("f8", 1), Type("i8", 0)
    x, n, i = Var("x", vector), Var("n", integer), Var("i", integer)
    g, b = Var("_t", vector, is_temp=True), Var("b", vector)
    compute = Assign(g, "sin", [x])
    body = [Assign(b, "zeros_like", [x]), Assign(b, "add", [b, g], inplace=True),
            Assign(b, "add", [b, x], inplace=True)]
    if compute_inside:
        body.insert(1, compute)
    loop = For(i, const(0), n, const(1), body)
    return Function("f", [x, n], [loop] if compute_inside else [compute, loop], [b], False), loop


def test_a_contribution_computed_before_a_loop_is_copied_each_iteration():
    fn, loop = loop_accumulating(compute_inside=False)
    assert assign_first_contributions(fn)
    assert [(s.prim, s.inplace) for s in loop.body] == [("copy", False), ("add", True)]


def test_a_contribution_computed_in_the_loop_body_becomes_the_adjoint():
    fn, loop = loop_accumulating(compute_inside=True)
    assert assign_first_contributions(fn)
    assert [(s.target.name, s.prim, s.inplace) for s in loop.body] == [("b", "sin", False), ("b", "add", True)]


def half_square(x):
    return np.sum(np.sin(x)) + 0.5 * x @ x


def test_a_copied_contribution_added_to_next_is_one_sum():
    """``0.5 * x @ x`` contributes ``0.5 * x`` (the user's) and ``x * 0.5`` (a rule's): one
    common subexpression; the copy of the first contribution plus the second is one sum
    (``passes/copy_then_add.py``), here ``(0.5 * x) * 2.0``, which simplification folds to
    ``x * 1.0``: a copy of x, as the gradient is x."""
    x = np.array([0.3, -1.2, 2.0])
    source = grad_source(half_square, x)
    code = [line.strip() for line in source.splitlines() if not line.lstrip().startswith("#")]
    assert "bx = x.copy()" in code and not any("0.5" in line for line in code), source
    np.testing.assert_allclose(adcompile.grad(python(half_square))(x), x + np.cos(x), rtol=1e-14)


def copy_then_broadcasting_add(a, b):
    y = a.copy()
    y += b
    return np.sum(y * y)


def test_a_copy_is_not_summed_with_a_value_that_would_broadcast_it():
    """``y += b`` never changes y's shape (numpy refuses b of shape (3,) into y of (3, 1));
    ``y = a + b`` would broadcast to (3, 3), so the copy stays and the error stays."""
    f = python(copy_then_broadcasting_add)
    a, b = np.ones((3, 1)), np.ones(3)
    with pytest.raises(Exception, match="broadcast"):
        adcompile.grad(f)(a, b)
    a, b = np.array([[1.0], [2.0]]), np.array([[0.5]])
    np.testing.assert_allclose(adcompile.grad(f)(a, b), 2 * (a + b), rtol=1e-14)


def test_a_scaling_by_a_power_of_two_folds_into_the_scaling_before_it():
    """``(x * 0.3) * 4.0`` is exactly ``x * 1.2`` rounded as ``x * 0.3`` is, doubled twice;
    ``(x * 0.3) * 3.0`` is not, and integer products keep their type."""
    from adcompile.passes.simplify import simplify
    vector, integers = Type("f8", 1), Type("i8", 1)
    x, k = Var("x", vector), Var("k", integers)
    scaled, by_four, by_three = (Var(name, vector, is_temp=True) for name in ("_t", "_t_1", "_t_2"))
    k_scaled, k_by_two = Var("_t_3", integers, is_temp=True), Var("_t_4", integers, is_temp=True)
    body = [Assign(scaled, "mul", [x, const(0.3)]), Assign(by_four, "mul", [const(4.0), scaled]),
            Assign(by_three, "mul", [scaled, const(3.0)]), Assign(k_scaled, "mul", [k, const(3)]),
            Assign(k_by_two, "mul", [k_scaled, const(2)])]
    simplify(Function("f", [x, k], body, [by_four, by_three, k_by_two], True, None))
    assert (body[1].args[0], body[1].args[1].value) == (x, 0.3 * 4.0)
    assert body[2].args[0] is scaled and body[4].args[0] is k_scaled
    values = np.array([0.1, -7.3, 1e300])
    assert np.array_equal((values * 0.3) * 4.0, values * (0.3 * 4.0))



def test_a_scaling_of_a_scaling_by_a_power_of_two_folds_too():
    """``(x * 2.0) * 100.0`` (reverse mode's ``2.0 * t * 100.0``) is ``x * 200.0`` bit for bit:
    the inner product only moves the exponent, so both round the same real product once (away
    from overflow and from the subnormal range, where the inner product would round too)."""
    from adcompile.passes.simplify import simplify
    vector = Type("f8", 1)
    x = Var("x", vector)
    doubled, scaled = Var("_t", vector, is_temp=True), Var("_t_1", vector, is_temp=True)
    body = [Assign(doubled, "mul", [const(2.0), x]), Assign(scaled, "mul", [doubled, const(100.0)])]
    simplify(Function("f", [x], body, [scaled], True, None))
    assert (body[1].args[0], body[1].args[1].value) == (x, 200.0)
    rng = np.random.default_rng(5)
    values = rng.standard_normal(10_000) * 10.0 ** rng.integers(-280, 280, 10_000)
    for power in (2.0, 0.5, -4.0, 0.125):
        for c in rng.standard_normal(20) * 10.0 ** rng.integers(-5, 5, 20):
            assert np.array_equal((values * power) * c, values * (power * c))
            assert np.array_equal((values * c) * power, values * (c * power))


def test_a_zero_safe_product_of_a_zero_cotangent_is_zero():
    """``mul_nz(0, d)`` and ``div_nz(0, d)`` are 0 for every d (inf and nan too): exactly zero,
    of the shape of ``d`` (a scalar 0.0, or zeros_like of an array)."""
    from adcompile.passes.simplify import simplify
    from adcompile.runtime import helpers as rt
    vector, scalar = Type("f8", 1), Type("f8", 0)
    d, s = Var("d", vector), Var("s", scalar)
    targets = [Var(f"_t_{k}", t, is_temp=True) for k, t in enumerate((vector, vector, scalar))]
    body = [Assign(targets[0], "mul_nz", [const(0.0), d]), Assign(targets[1], "div_nz", [const(0.0), d]),
            Assign(targets[2], "div_nz", [const(0.0), s])]
    simplify(Function("f", [d, s], body, targets, True, None))
    assert [(stmt.prim, stmt.args) for stmt in body[:2]] == [("zeros_like", [d])] * 2
    assert body[2].prim == "alias" and body[2].args[0].value == 0.0
    for kernel in (rt.mul_nz, rt.div_nz):
        assert np.array_equal(kernel(0.0, np.array([np.inf, np.nan, 0.0, -2.0])), np.zeros(4))


def test_the_rosenbrock_gradient_scales_once_per_product():
    source = grad_source(rosenbrock, X)
    assert "* 200.0" in source and "* 100.0" not in source
    np.testing.assert_allclose(adcompile.grad(adcompile.compile(rosenbrock))(X), rosenbrock_gradient(X), rtol=1e-13)


def reversed_difference_cancelling(y):
    """Random program 48003101: -y[::-1] written so that both ``y`` terms cancel; the adjoint
    of the first ``y`` took ``-g``'s buffer (``by = unbroadcast(-g, y)``) and was updated in
    place, while common subexpressions had made that same ``-g`` the reversed term's adjoint."""
    w = y
    y = y - w[::-1] - y
    return y @ y


def reversed_difference_other_order(y):
    return np.sum((y[::-1] - y - y) ** 2)


def negated_twice(y):
    z = -y - y[::-1] + (-y)
    return np.sum(z * z)


@pytest.mark.parametrize("mode", ["python", "lowered", "numba"])
@pytest.mark.parametrize("f", [reversed_difference_cancelling, reversed_difference_other_order, negated_twice],
                         ids=lambda f: f.__name__)
def test_an_adjoint_updated_in_place_shares_no_memory_with_a_value_read_later(f, mode, monkeypatch):
    """``rt.unbroadcast(g, x)`` may be ``g`` itself: an accumulator that takes its buffer
    shares ``g``'s memory (``ir/memory.py``), so no later read of ``g`` may stand for another
    value computed equal to it before the accumulator was updated."""
    if mode == "lowered":
        monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    compiled = adcompile.compile(f, backend="numba" if mode == "numba" else "python")
    y = np.array([0.5617259379213768, -0.9667177413017236, 0.3])
    assert adcompile.gradcheck(compiled, (y,))
