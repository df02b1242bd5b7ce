"""``adcompile.custom_vjp`` and ``adcompile.custom_jvp``, spelled as in JAX's documentation.

Where a rule is the true derivative, derivatives are compared with central differences; a
deliberately scaled rule shows the rule is what is used (its gradient is the scaled one).
Second order differentiates the rules. Both backends.
"""
import numpy as np
import pytest

import adcompile
from adcompile import AdCompileError, nn
from adcompile.errors import NoDerivativeRuleError
from oracles import gradient_by_differences, hessian_by_second_differences, jacobian_by_differences

BACKENDS = ["python", "numba"]


# ---------------------------------------------------------------- JAX's custom_vjp example
@adcompile.custom_vjp
def f(x, y):
    return np.sin(x) * y


def f_fwd(x, y):
    return f(x, y), (np.cos(x), np.sin(x), y)


def f_bwd(res, g):
    cos_x, sin_x, y = res
    return (cos_x * g * y, sin_x * g)


f.defvjp(f_fwd, f_bwd)


@adcompile.custom_vjp
def f_scaled(x, y):  # the same function with a rule three times the derivative
    return np.sin(x) * y


def f_scaled_fwd(x, y):
    return f_scaled(x, y), (x, y)


def f_scaled_bwd(res, g):
    x, y = res
    return (3.0 * np.cos(x) * y * g, None)


f_scaled.defvjp(f_scaled_fwd, f_scaled_bwd)


def _xy():
    return np.array([0.3, -1.1, 2.0]), np.array([1.5, 0.4, -0.8])


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_documented_example(backend):
    assert np.isclose(adcompile.grad(adcompile.compile(f, backend=backend))(2.0, 3.0), np.cos(2.0) * 3.0)
    loss = adcompile.compile(lambda x, y: np.sum(f(x, y) ** 2), backend=backend)
    x, y = _xy()
    gx, gy = adcompile.grad(loss, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, gradient_by_differences(loss, (x, y), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, gradient_by_differences(loss, (x, y), 1), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_rule_is_what_reverse_mode_uses(backend):
    loss = adcompile.compile(lambda x, y: np.sum(f_scaled(x, y)), backend=backend)
    x, y = _xy()
    gx, gy = adcompile.grad(loss, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 3.0 * gradient_by_differences(loss, (x, y), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, 0.0 * y)  # bwd returned None for y


def test_second_order_differentiates_the_rule():
    loss = adcompile.compile(lambda x, y: np.sum(f(x, y) ** 2), backend="python")
    x, y = _xy()
    np.testing.assert_allclose(adcompile.hessian(loss)(x, y), hessian_by_second_differences(loss, (x, y)),
                               rtol=1e-4, atol=1e-6)
    scaled = adcompile.compile(lambda x, y: np.sum(f_scaled(x, y)), backend="python")
    # the rule's derivative, 3 cos(x) y, differentiated again: -3 sin(x) y on the diagonal
    np.testing.assert_allclose(adcompile.hessian(scaled)(x, y), np.diag(-3.0 * np.sin(x) * y), rtol=1e-12)


@adcompile.custom_vjp
def pair(x):
    return np.exp(x), x * x


def pair_fwd(x):
    e = np.exp(x)
    return (e, x * x), (e, x)


def pair_bwd(res, g):
    e, x = res
    g_exp, g_square = g
    return (g_exp * e + 2.0 * x * g_square,)


pair.defvjp(pair_fwd, pair_bwd)


def looped(x, n):
    total = 0.0
    for i in range(n):
        a, b = pair(x * (i + 1) * 0.1)
        total = total + np.sum(a) - 0.5 * np.sum(b)
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tuple_output_in_a_loop(backend):
    loss = adcompile.compile(looped, backend=backend)
    x = _xy()[0]
    for n in (3, 0):  # residuals saved in each iteration; a loop that does not run
        np.testing.assert_allclose(adcompile.grad(loss)(x, n), gradient_by_differences(loss, (x, n)),
                                   rtol=1e-6, atol=1e-8)


def test_forward_mode_differentiates_the_forward_rule_and_float32():
    loss = adcompile.compile(lambda x, y: f(x, y) * x, backend="python")
    x, y = _xy()
    np.testing.assert_allclose(adcompile.jacobian(loss, mode="fwd")(x, y), jacobian_by_differences(loss, (x, y)),
                               rtol=1e-6, atol=1e-8)
    g = adcompile.grad(adcompile.compile(lambda x, y: np.sum(f(x, y)), backend="python"))
    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    assert g(x32, y32).dtype == np.float32
    np.testing.assert_allclose(g(x32, y32), np.cos(x) * y, rtol=1e-5)


class _Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x):
        return f_scaled(self.linear(x), 2.0)  # its rule: three times the derivative


def test_in_a_modules_forward():
    adcompile.init.manual_seed(0)
    model = _Scaled()
    X = np.random.default_rng(1).standard_normal((4, 3))

    def loss_fn(model, X):
        return np.sum(model(X))
    weight, bias = model.linear.weight.data.copy(), model.linear.bias.data.copy()
    true = gradient_by_differences(lambda w: np.sum(np.sin(X @ w.T + bias) * 2.0), (weight,))
    np.testing.assert_allclose(adcompile.grad(loss_fn)(model, X)["linear.weight"], 3.0 * true, rtol=1e-6, atol=1e-8)


def test_eagerly_it_runs_the_function():
    x, y = _xy()
    np.testing.assert_allclose(f(x, y), np.sin(x) * y)
    assert f.__name__ == "f"


def test_errors_name_the_rule_and_the_line():
    @adcompile.custom_vjp
    def no_rule(x):
        return x * 2.0
    loss = adcompile.compile(lambda x: np.sum(no_rule(x)), backend="python")
    x = _xy()[0]
    np.testing.assert_allclose(loss(x), 2 * np.sum(x))  # compiles and runs without its rule
    with pytest.raises(NoDerivativeRuleError, match=r"custom_vjp function no_rule has no rule: call "
                       r"no_rule.defvjp\(fwd, bwd\)(.|\n)*test_custom_rules.py"):
        adcompile.grad(loss)(x)

    @adcompile.custom_vjp
    def three(x, y):
        return x * y
    three.defvjp(lambda x, y: (x * y, (x, y)), lambda res, g: (g * res[1], g * res[0], g))
    with pytest.raises(AdCompileError, match=r"returned 3 cotangent\(s\), but custom_vjp function three takes 2 "
                       r"argument\(s\) \(x, y\)"):
        adcompile.grad(adcompile.compile(lambda x, y: np.sum(three(x, y)), backend="python"))(x, x)

    @adcompile.custom_vjp
    def flat(x):
        return x * 2.0
    flat.defvjp(lambda x: (x * 2.0, ()), lambda res, g: (np.sum(g),))
    with pytest.raises(AdCompileError, match="wrong shape for input 'x'"):
        adcompile.grad(adcompile.compile(lambda x: np.sum(flat(x)), backend="python"))(x)

    @adcompile.custom_vjp
    def short(x):
        return x * 2.0
    short.defvjp(lambda x: (x * 2.0, ()), lambda res, g: (g[:2],))
    with pytest.raises(Exception, match="shape"):
        adcompile.grad(adcompile.compile(lambda x: np.sum(short(x)), backend="python"))(x)


# ---------------------------------------------------------------- custom_jvp
@adcompile.custom_jvp
def softplus(x):
    return np.log1p(np.exp(x))


@softplus.defjvp
def softplus_jvp(primals, tangents):
    (x,), (dx,) = primals, tangents
    return softplus(x), dx / (1.0 + np.exp(-x))


@adcompile.custom_jvp
def twice_rule(x, y):  # a rule twice the derivative
    return x * np.sin(y)


@twice_rule.defjvp
def twice_rule_jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    return twice_rule(x, y), 2.0 * (dx * np.sin(y) + x * np.cos(y) * dy)


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_jvp_in_both_modes(backend):
    loss = adcompile.compile(lambda x: np.sum(softplus(x) * x), backend=backend)
    x = _xy()[0]
    np.testing.assert_allclose(adcompile.grad(loss)(x), gradient_by_differences(loss, (x,)), rtol=1e-6, atol=1e-8)
    u = np.array([1.0, -2.0, 0.5])
    _, tangent = adcompile.jvp(loss, (x,), (u,))
    np.testing.assert_allclose(tangent, gradient_by_differences(loss, (x,)) @ u, rtol=1e-6)
    np.testing.assert_allclose(adcompile.hessian(loss)(x), hessian_by_second_differences(loss, (x,)),
                               rtol=1e-4, atol=1e-6)


def test_custom_jvp_keeps_its_stable_rule_where_the_code_overflows():
    g = adcompile.grad(adcompile.compile(lambda x: np.sum(softplus(x)), backend="python"))
    np.testing.assert_allclose(g(np.array([0.0, 800.0])), [0.5, 1.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_jvp_rule_is_what_both_modes_use(backend):
    h = adcompile.compile(lambda x, y: twice_rule(x, y) * 1.5, backend=backend)
    x, y = _xy()
    for k in (0, 1):
        true = jacobian_by_differences(h, (x, y), k)
        for mode in ("rev", "fwd"):
            np.testing.assert_allclose(adcompile.jacobian(h, wrt=k, mode=mode)(x, y), 2.0 * true, rtol=1e-6,
                                       atol=1e-8)


def test_custom_jvp_second_order_transposes_a_rule_that_reads_the_primals():
    loss = adcompile.compile(lambda x, y: np.sum(twice_rule(x, y)), backend="python")
    x, y = _xy()
    # the rule's gradient in y is 2 x cos(y); its derivative in y: -2 x sin(y)
    np.testing.assert_allclose(adcompile.hessian(loss, wrt=1)(x, y), np.diag(-2.0 * x * np.sin(y)), rtol=1e-12)
    np.testing.assert_allclose(adcompile.grad(twice_rule)(1.5, 0.3), 2.0 * np.sin(0.3))


def test_custom_jvp_errors():
    @adcompile.custom_jvp
    def no_rule(x):
        return x * 2.0
    x = _xy()[0]
    with pytest.raises(NoDerivativeRuleError, match=r"no_rule.defjvp\(jvp\)"):
        adcompile.grad(adcompile.compile(lambda x: np.sum(no_rule(x)), backend="python"))(x)

    @adcompile.custom_jvp
    def summed(x):
        return x * 2.0

    @summed.defjvp
    def summed_jvp(primals, tangents):
        return summed(primals[0]), np.sum(tangents[0])
    with pytest.raises(AdCompileError, match="returned a tangent with 0 dimension"):
        adcompile.jvp(adcompile.compile(lambda x: np.sum(summed(x)), backend="python"), (x,), (x,))
