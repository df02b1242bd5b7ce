"""Custom differentiable Functions (ctx / forward / backward), ported from the PyTorch tutorial.

Every gradient is compared with finite differences (``adcompile.gradcheck`` or central
differences here). Most cases run the generated Python (fast); a representative subset also
runs through numba.
"""
import numpy as np
import pytest

import adcompile
from adcompile import AdCompileError, Function, once_differentiable
from adcompile.checks.gradcheck import GradcheckError
from example_files import load_example
from oracles import gradient_by_differences

BACKENDS = ["python", "numba"]


# ---------------------------------------------------------------- the tutorial's Functions
# LinearFunction, MulConstant and the Linear module exactly as ported in the example.
_EXAMPLE = load_example("custom_function")
LinearFunction, MulConstant, Linear = _EXAMPLE.LinearFunction, _EXAMPLE.MulConstant, _EXAMPLE.Linear


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((5, 3)), rng.standard_normal((2, 3)), rng.standard_normal(2)


def linear_loss(x, w, b):
    y = LinearFunction.apply(x, w, b)
    return np.sum(y * y)


def linear_loss_no_bias(x, w):
    y = LinearFunction.apply(x, w)
    return np.sum(np.sin(y))


# ---------------------------------------------------------------- eager apply
def test_eager_apply_returns_numpy_forward_results():
    x, w, b = _data()
    np.testing.assert_allclose(LinearFunction.apply(x, w, b), x @ w.T + b)
    np.testing.assert_allclose(LinearFunction.apply(x, w), x @ w.T)
    np.testing.assert_allclose(MulConstant.apply(x, 2.5), 2.5 * x)
    assert isinstance(LinearFunction.apply(x, w, b), np.ndarray)


def test_linear_module_eager_and_compiled_agree():
    x, _, _ = _data()
    layer = Linear(3, 2)
    assert layer.extra_repr() == "in_features=3, out_features=2, bias=True"
    f = adcompile.compile(linear_loss, backend="python")
    np.testing.assert_allclose(f(x, layer.weight, layer.bias), np.sum(layer(x) ** 2))
    no_bias = Linear(3, 2, bias=False)
    np.testing.assert_allclose(no_bias(x), x @ no_bias.weight.T)


def test_linear_module_training_step_uses_custom_backward():
    x, _, _ = _data()
    layer = Linear(3, 2)
    target = np.ones((5, 2))

    def module_loss(x, weight, bias, target):
        y = LinearFunction.apply(x, weight, bias)
        return np.mean((y - target) ** 2)

    f = adcompile.compile(module_loss, backend="python")
    adcompile.gradcheck(f, (x, layer.weight, layer.bias, target), wrt=(1, 2))
    g = adcompile.grad(f, wrt=(1, 2))
    before = f(x, layer.weight, layer.bias, target)
    for _ in range(20):
        gw, gb = g(x, layer.weight, layer.bias, target)
        layer.weight = layer.weight - 0.1 * gw
        layer.bias = layer.bias - 0.1 * gb
    assert f(x, layer.weight, layer.bias, target) < before


# ---------------------------------------------------------------- the tutorial's gradients
@pytest.mark.parametrize("backend", BACKENDS)
def test_linear_function_with_bias(backend):
    x, w, b = _data()
    f = adcompile.compile(linear_loss, backend=backend)
    np.testing.assert_allclose(f(x, w, b), np.sum((x @ w.T + b) ** 2))
    assert adcompile.gradcheck(f, (x, w, b), wrt=(0, 1, 2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_linear_function_without_bias(backend):
    x, w, _ = _data(1)
    f = adcompile.compile(linear_loss_no_bias, backend=backend)
    np.testing.assert_allclose(f(x, w), np.sum(np.sin(x @ w.T)))
    assert adcompile.gradcheck(f, (x, w), wrt=(0, 1))


def test_linear_function_with_explicit_none_bias():
    def loss(x, w, b):
        return np.sum(LinearFunction.apply(x, w, b) ** 2)

    x, w, _ = _data(2)
    f = adcompile.compile(loss, backend="python")
    assert adcompile.gradcheck(f, (x, w, None), wrt=(0, 1))


def test_needs_input_grad_skips_unneeded_gradients():
    x, w, b = _data()
    f = adcompile.compile(linear_loss, backend="python")
    only_weight = adcompile.source(adcompile.grad(f, wrt=1), x, w, b)
    assert "# backward of custom Function LinearFunction" in only_weight
    assert "grad_weight" in only_weight
    assert "grad_input" not in only_weight and "grad_bias" not in only_weight
    only_input = adcompile.source(adcompile.grad(f, wrt=0), x, w, b)
    assert "grad_input" in only_input and "grad_weight" not in only_input
    assert "if " not in only_input  # the needs_input_grad branches were decided at compile time
    gw = adcompile.grad(f, wrt=1)(x, w, b)
    np.testing.assert_allclose(gw, gradient_by_differences(f, [x, w, b], 1), rtol=1e-6, atol=1e-6)


def test_needs_input_grad_is_false_for_inactive_inputs():
    # needs_input_grad is a compile-time value: expose it through which gradients are added
    class Flags(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            ga = g * 0.0 + 1.0 if ctx.needs_input_grad[0] else None
            gb = g * 0.0 + 2.0 if ctx.needs_input_grad[1] else None
            return ga, gb

    def f(a, b):
        return Flags.apply(a, b)

    c = adcompile.compile(f, backend="python")
    text = adcompile.source(adcompile.grad(c, wrt=0), 1.0, 2.0)
    assert "2.0" not in text.split("# backward of custom Function Flags")[1]
    assert adcompile.grad(c, wrt=(0, 1))(1.0, 2.0) == (1.0, 2.0)


def test_mul_constant_with_literal_and_argument_constant():
    def with_literal(x):
        return np.sum(MulConstant.apply(x, 3.0) ** 2)

    def with_argument(x, c):
        return np.sum(np.cos(MulConstant.apply(x, c)))

    x = np.linspace(-1.0, 1.0, 4)
    assert adcompile.gradcheck(adcompile.compile(with_literal, backend="python"), (x,))
    f = adcompile.compile(with_argument, backend="python")
    assert adcompile.gradcheck(f, (x, 1.7), wrt=0)
    # backward returns None for the constant: it gets no gradient, as in PyTorch
    assert adcompile.grad(f, wrt=1)(x, 1.7) == 0.0


def test_source_shows_forward_and_backward_of_custom_function():
    x, w, b = _data()
    f = adcompile.compile(linear_loss, backend="python")
    primal = adcompile.source(f, x, w, b)
    assert "# forward of custom Function LinearFunction" in primal
    text = adcompile.source(adcompile.grad(f, wrt=(0, 1, 2)), x, w, b)
    assert "# backward of custom Function LinearFunction" in text
    backward = text.split("# backward of custom Function LinearFunction")[1]
    assert "grad_output" in backward and "saved_weight" in backward


# ---------------------------------------------------------------- the user's backward is the rule
class ScaledSquare(Function):
    """x**2 whose backward deliberately returns twice the true gradient."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 2.0 * (2.0 * x * grad_output)


def test_user_backward_is_used_not_the_derivative_of_forward():
    def f(x):
        return np.sum(np.sin(ScaledSquare.apply(x)))

    c = adcompile.compile(f, backend="python")
    x = np.array([0.3, -0.7, 1.1])
    true = gradient_by_differences(c, [x], 0)
    np.testing.assert_allclose(adcompile.grad(c)(x), 2.0 * true, rtol=1e-6)
    with pytest.raises(GradcheckError, match="argument 'x'"):
        adcompile.gradcheck(c, (x,))


class RoundSTE(Function):
    """Rounding with a straight-through gradient: forward is piecewise constant."""

    @staticmethod
    def forward(ctx, x):
        return np.round(x)

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output


def test_forward_is_not_differentiated():
    def f(x):
        return np.sum(RoundSTE.apply(x) * x)

    c = adcompile.compile(f, backend="python")
    x = np.array([0.2, 1.7, -2.4])
    # d/dx [round(x) * x] with the straight-through rule: x + round(x); autodiff of round gives 0
    np.testing.assert_allclose(adcompile.grad(c)(x), x + np.round(x))


# ---------------------------------------------------------------- several outputs
class SinCos(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.sin(x), np.cos(x)

    @staticmethod
    def backward(ctx, grad_sin, grad_cos):
        x, = ctx.saved_tensors
        return grad_sin * np.cos(x) - grad_cos * np.sin(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_multiple_outputs(backend):
    def f(x, w):
        s, c = SinCos.apply(x * w)
        return np.sum(s * c + 3.0 * c)

    x, w = np.linspace(0.1, 1.0, 4), np.linspace(-1.0, 2.0, 4)
    c = adcompile.compile(f, backend=backend)
    np.testing.assert_allclose(c(x, w), np.sum(np.sin(x * w) * np.cos(x * w) + 3 * np.cos(x * w)))
    assert adcompile.gradcheck(c, (x, w))


def test_unused_output_gets_zero_gradient():
    def f(x):
        s, c = SinCos.apply(x)
        return np.sum(s)

    c = adcompile.compile(f, backend="python")
    assert adcompile.gradcheck(c, (np.linspace(0.0, 1.0, 3),))


def test_mark_non_differentiable_output():
    class ClipWithMask(Function):
        @staticmethod
        def forward(ctx, x):
            mask = (x > 0.0) * 1.0
            ctx.mark_non_differentiable(mask)
            ctx.save_for_backward(mask)
            return x * mask, mask

        @staticmethod
        def backward(ctx, grad_out, grad_mask):
            mask, = ctx.saved_tensors
            return grad_out * mask + grad_mask  # grad_mask is zeros

    def f(x):
        y, mask = ClipWithMask.apply(x)
        return np.sum(y * y + mask * x)

    c = adcompile.compile(f, backend="python")
    assert adcompile.gradcheck(c, (np.array([-1.0, 0.5, 2.0]),))


# ---------------------------------------------------------------- numerically better backward
class Softplus(Function):
    """log(1 + exp(x)) computed stably, with the stable sigmoid as derivative."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return np.maximum(x, 0.0) + np.log1p(np.exp(-np.abs(x)))

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        z = np.exp(-np.abs(x))
        sigmoid = np.where(x >= 0.0, 1.0 / (1.0 + z), z / (1.0 + z))
        return grad_output * sigmoid


LogSumExp = _EXAMPLE.LogSumExp  # stable forward, softmax backward that never overflows


def naive_softplus_loss(x):
    return np.sum(np.log(1.0 + np.exp(x)))


def custom_softplus_loss(x):
    return np.sum(Softplus.apply(x))


def naive_logsumexp(x):
    return np.log(np.sum(np.exp(x)))


def custom_logsumexp(x):
    return LogSumExp.apply(x)


def test_stable_softplus_backward_where_naive_autodiff_overflows():
    x = np.array([-800.0, -3.0, 0.5, 800.0])
    naive = adcompile.compile(naive_softplus_loss, backend="python")
    custom = adcompile.compile(custom_softplus_loss, backend="python")
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.all(np.isfinite(adcompile.grad(naive)(x)))
    g = adcompile.grad(custom)(x)
    assert np.all(np.isfinite(g))
    np.testing.assert_allclose(g, [0.0, 1 / (1 + np.exp(3.0)), 1 / (1 + np.exp(-0.5)), 1.0], atol=1e-12)
    np.testing.assert_allclose(custom(x), np.sum(np.logaddexp(0.0, x)))
    assert adcompile.gradcheck(custom, (np.array([-3.0, 0.5, 2.0]),))


@pytest.mark.parametrize("backend", BACKENDS)
def test_stable_logsumexp_backward(backend):
    big = np.array([1000.0, 999.0, 998.5])
    naive = adcompile.compile(naive_logsumexp, backend="python")
    custom = adcompile.compile(custom_logsumexp, backend=backend)
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.all(np.isfinite(adcompile.grad(naive)(big)))
    g = adcompile.grad(custom)(big)
    np.testing.assert_allclose(g, np.exp(big - big.max()) / np.sum(np.exp(big - big.max())))
    assert adcompile.gradcheck(custom, (big,))


# ---------------------------------------------------------------- errors
def test_wrong_shape_gradient_is_a_clear_error():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x, w):
            return x @ w

        @staticmethod
        def backward(ctx, g):
            return np.sum(g), None  # a scalar for a matrix input

    def f(x, w):
        return np.sum(BadShape.apply(x, w))

    c = adcompile.compile(f, backend="python")
    x, w = np.ones((2, 3)), np.ones((3, 2))
    with pytest.raises(AdCompileError, match=r"BadShape.*wrong shape.*input 'x'"):
        adcompile.grad(c, wrt=0)(x, w)


def test_too_many_gradients_is_an_error():
    class TooMany(Function):
        @staticmethod
        def forward(ctx, x):
            return 2.0 * x

        @staticmethod
        def backward(ctx, g):
            return 2.0 * g, g

    c = adcompile.compile(lambda_free_sum(TooMany), backend="python")
    with pytest.raises(AdCompileError, match="TooMany returned 2 gradients.*1 input"):
        adcompile.grad(c)(np.ones(3))


def test_gradient_for_a_none_input_is_an_error():
    class GradForNone(Function):
        @staticmethod
        def forward(ctx, x, extra=None):
            return 2.0 * x

        @staticmethod
        def backward(ctx, g):
            return 2.0 * g, g

    c = adcompile.compile(lambda_free_sum(GradForNone), backend="python")
    with pytest.raises(AdCompileError, match="input 'extra'.*return None"):
        adcompile.grad(c)(np.ones(3))


def lambda_free_sum(cls):
    def f(x):
        return np.sum(cls.apply(x))
    return f


# ---------------------------------------------------------------- in loops and helpers
class SavedTanh(Function):
    @staticmethod
    def forward(ctx, x):
        y = np.tanh(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad_output):
        y, = ctx.saved_tensors
        return grad_output * (1.0 - y * y)


def recurrent(h, W, n):
    for i in range(n):
        h = SavedTanh.apply(W @ h)
    return np.sum(h * h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_custom_function_inside_a_loop(backend):
    rng = np.random.default_rng(3)
    h, W = rng.standard_normal(3), 0.6 * rng.standard_normal((3, 3))
    c = adcompile.compile(recurrent, backend=backend)
    assert adcompile.gradcheck(c, (h, W, 4), wrt=(0, 1))


def test_custom_function_inside_a_while_loop_and_branch():
    def f(x, n):
        k = 0
        while k < n:
            if k % 2 == 0:
                x = MulConstant.apply(x, 1.5)
            else:
                x = SavedTanh.apply(x)
            k += 1
        return np.sum(x)

    c = adcompile.compile(f, backend="python")
    assert adcompile.gradcheck(c, (np.array([0.3, -0.2, 0.8]), 5), wrt=0)


def dense_layer(x, w, b):
    return SavedTanh.apply(LinearFunction.apply(x, w, b))


def two_layers(x, w1, b1, w2):
    h = dense_layer(x, w1, b1)
    return np.sum(LinearFunction.apply(h, w2) ** 2)


def test_custom_function_called_from_a_helper_function():
    rng = np.random.default_rng(4)
    x, w1, b1, w2 = (rng.standard_normal((4, 3)), rng.standard_normal((5, 3)), rng.standard_normal(5),
                     rng.standard_normal((2, 5)))
    c = adcompile.compile(two_layers, backend="python")
    assert adcompile.gradcheck(c, (x, w1, b1, w2))


linear = LinearFunction.apply  # the PyTorch idiom: an alias of apply at module level


def test_apply_alias_at_module_level():
    def f(x, w, b):
        return np.sum(linear(x, w, b) ** 2)

    x, w, b = _data(5)
    assert adcompile.gradcheck(adcompile.compile(f, backend="python"), (x, w, b))


def test_vjp_through_custom_function():
    x, w, b = _data(6)
    c = adcompile.compile(lambda_free_linear, backend="python")
    out, pullback = adcompile.vjp(c, x, w, b)
    ct = np.ones_like(out)
    gx, gw, gb = pullback(ct)
    np.testing.assert_allclose(gx, ct @ w)
    np.testing.assert_allclose(gw, ct.T @ x)
    np.testing.assert_allclose(gb, ct.sum(0))


def lambda_free_linear(x, w, b):
    return LinearFunction.apply(x, w, b)


SCALE = np.array([1.0, 2.0, 3.0])


class GlobalScale(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * SCALE  # reads a global array (deliberately not 2.0)


def test_backward_reading_a_global_array():
    c = adcompile.compile(lambda_free_sum(GlobalScale), backend="python")
    np.testing.assert_allclose(adcompile.grad(c)(np.ones(3)), SCALE)


# ---------------------------------------------------------------- second order
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 3.0 * x * x * grad_output


class OnceCube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        return 3.0 * x * x * grad_output


def test_second_order_through_custom_backward():
    def f(x):
        return np.sum(np.sin(Cube.apply(x)))

    c = adcompile.compile(f, backend="python")
    x = np.array([0.3, -0.5, 0.9])
    g = adcompile.grad(c)
    h = adcompile.hessian(c)(x)
    numeric = np.stack([(g(x + 1e-6 * e) - g(x - 1e-6 * e)) / 2e-6 for e in np.eye(3)])
    np.testing.assert_allclose(h, numeric, rtol=1e-5, atol=1e-7)


def test_once_differentiable_refuses_second_order():
    def f(x):
        return np.sum(np.sin(OnceCube.apply(x)))

    c = adcompile.compile(f, backend="python")
    x = np.array([0.3, -0.5, 0.9])
    assert adcompile.gradcheck(c, (x,))
    with pytest.raises(AdCompileError, match="once_differentiable"):
        adcompile.hessian(c)(x)


# ---------------------------------------------------------------- checking a backward directly
def test_gradcheck_of_apply_checks_the_backward_like_pytorch():
    x, w, b = _data(7)
    assert adcompile.gradcheck(LinearFunction.apply, (x, w, b))
    assert adcompile.gradcheck(LinearFunction.apply, (x, w))
    assert adcompile.gradcheck(MulConstant.apply, (x, 2.5))
    assert adcompile.gradcheck(SinCos.apply, (x,))
    assert adcompile.gradcheck(LogSumExp, (np.array([1000.0, 999.0]),))


class WrongWeightGradient(LinearFunction):
    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        return grad_output @ weight, 0.5 * (grad_output.T @ input), grad_output.sum(0)


def test_gradcheck_names_the_input_whose_gradient_is_wrong():
    x, w, b = _data(8)
    with pytest.raises(GradcheckError, match="WrongWeightGradient: gradient of input 'weight'"):
        adcompile.gradcheck(WrongWeightGradient.apply, (x, w, b))

    def loss(x, w, b):
        return np.sum(WrongWeightGradient.apply(x, w, b) ** 2)

    c = adcompile.compile(loss, backend="python")
    assert adcompile.gradcheck(c, (x, w, b), wrt=(0, 2))
    with pytest.raises(GradcheckError, match="argument 'w'"):
        adcompile.gradcheck(c, (x, w, b), wrt=(0, 1, 2))


def test_wrong_shape_of_same_ndim_fails_at_run_time():
    class Transposed(Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x)
            return x @ w

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return None, g.T @ x  # (n, m) instead of (m, n)

    def f(x, w):
        return np.sum(Transposed.apply(x, w))

    c = adcompile.compile(f, backend="python")
    with pytest.raises(ValueError):
        adcompile.grad(c, wrt=1)(np.ones((2, 3)), np.ones((3, 4)))


def test_gradgradcheck_through_custom_functions():
    def f(x):
        return np.sum(np.sin(Cube.apply(x)))

    def g(x, w, b):
        return np.sum(np.tanh(LinearFunction.apply(x, w, b)) ** 2)

    assert adcompile.gradgradcheck(adcompile.compile(f, backend="python"), (np.array([0.3, -0.5, 0.9]),))
    x, w, b = _data(9)
    assert adcompile.gradgradcheck(adcompile.compile(g, backend="python"), (x, w, b))


def test_second_order_through_custom_function_in_a_loop():
    rng = np.random.default_rng(3)
    h, W = rng.standard_normal(3), 0.6 * rng.standard_normal((3, 3))
    c = adcompile.compile(recurrent, backend="python")
    assert adcompile.gradgradcheck(c, (h, W, 3), wrt=(0, 1))


# ---------------------------------------------------------------- more of the ctx API
class Gather(Function):
    """x[idx] with a scatter-add loop as backward; the index array gets no gradient."""

    @staticmethod
    def forward(ctx, x, idx):
        ctx.save_for_backward(idx)
        ctx.n = x.shape[0]
        return x[idx]

    @staticmethod
    def backward(ctx, grad_output):
        idx, = ctx.saved_tensors
        grad_x = np.zeros(ctx.n)
        for k in range(idx.shape[0]):
            grad_x[idx[k]] += grad_output[k]
        return grad_x, None


def gather_loss(x, idx):
    return np.sum(Gather.apply(x, idx) ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
def test_backward_with_a_loop_and_integer_input(backend):
    c = adcompile.compile(gather_loss, backend=backend)
    assert adcompile.gradcheck(c, (np.array([1.0, 2.0, 3.0]), np.array([0, 2, 2, 1])), wrt=0)


def test_backward_whose_loop_variable_widens():
    class SumSquares(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return np.sum(x * x)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            grad = np.zeros_like(x)
            total = 0  # becomes a float in the loop: translation restarts with a float
            for k in range(x.shape[0]):
                total += 2.0 * g
                grad[k] = total * x[k] / (k + 1)
            return grad

    c = adcompile.compile(lambda_free_sum(SumSquares), backend="python")
    assert adcompile.gradcheck(c, (np.array([1.0, 2.0, -0.5]),))


class WidenedInForward(Function):
    @staticmethod
    def forward(ctx, u):
        for i in range(2):
            u = u * np.full(3, 1.5)  # float64 from here: u's own variable widens on a retry
        return u

    @staticmethod
    def backward(ctx, g):
        return g * 2.25


class WidenedInBackward(Function):
    @staticmethod
    def forward(ctx, u):
        return u * 2.25  # float32 for a float32 u: so is backward's g

    @staticmethod
    def backward(ctx, g):
        for i in range(2):
            g = g * np.full(3, 1.5)  # float64 from here
        return g


def widened_in_forward_and_backward(x):
    return np.sum(WidenedInForward.apply(x) * x) + np.sum(WidenedInBackward.apply(x) * x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_parameters_of_forward_and_backward_widened_in_a_loop(backend):
    """A parameter of forward or backward that a loop of it gives a wider dtype: the rule's own
    variable is of the wider type from the next round of type inference on (it kept the
    argument's, and inference "did not converge")."""
    c = adcompile.compile(widened_in_forward_and_backward, backend=backend)
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    assert c(x) == pytest.approx(float(np.sum(x.astype(np.float64) ** 2 * 4.5)), rel=1e-6)
    np.testing.assert_allclose(adcompile.grad(c)(x), 9.0 * x, rtol=1e-6)


def test_value_and_grad_of_custom_function_in_a_loop():
    def f(x, c, n):
        for i in range(n):
            x = MulConstant.apply(SavedTanh.apply(x), c)
        return np.sum(x)

    compiled = adcompile.compile(f, backend="python")
    x = np.array([0.5, -0.2])
    value, grad = adcompile.value_and_grad(compiled)(x, 0.7, 3)
    assert value == pytest.approx(compiled(x, 0.7, 3))
    np.testing.assert_allclose(grad, gradient_by_differences(compiled, [x, 0.7, 3], 0), rtol=1e-6)


def test_set_materialize_grads_false_gives_none_for_unused_outputs():
    class SinCosNone(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            ctx.save_for_backward(x)
            return np.sin(x), np.cos(x)

        @staticmethod
        def backward(ctx, grad_sin, grad_cos):
            x, = ctx.saved_tensors
            grad = np.zeros_like(x)
            if grad_sin is not None:
                grad = grad + grad_sin * np.cos(x)
            if grad_cos is not None:
                grad = grad - grad_cos * np.sin(x)
            return grad

    def f(x):
        s, c = SinCosNone.apply(x)
        return np.sum(s)

    c = adcompile.compile(f, backend="python")
    assert adcompile.gradcheck(c, (np.array([0.5, -0.2]),))
    assert "np.sin(" not in adcompile.source(adcompile.grad(c), np.ones(2)).split("# backward of")[1]


def test_custom_functions_nested_in_forward_and_backward():
    class Outer(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return MulConstant.apply(x, 2.0) * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return MulConstant.apply(g * x, 4.0)

    c = adcompile.compile(lambda_free_sum(Outer), backend="python")
    x = np.array([0.5, -0.2])
    assert adcompile.gradcheck(c, (x,))
    assert adcompile.gradgradcheck(c, (x,))


def test_star_args_forward():
    class Product(Function):
        @staticmethod
        def forward(ctx, *factors):
            ctx.save_for_backward(factors[0], factors[1])
            return factors[0] * factors[1]

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a

    def f(a, b):
        return np.sum(Product.apply(a, b) ** 2)

    assert adcompile.gradcheck(adcompile.compile(f, backend="python"),
                               (np.array([0.5, -0.2]), np.array([1.5, 2.0])))


def test_forward_mode_through_custom_function():
    x, w, b = _data(10)
    c = adcompile.compile(lambda_free_linear, backend="python")
    _, tangent = adcompile.jvp(c, (x, w, b), (np.ones_like(x), None, None))
    np.testing.assert_allclose(tangent, np.ones_like(x) @ w.T)


def test_errors_in_forward_are_located():
    class SetsInLoop(Function):
        @staticmethod
        def forward(ctx, x):
            for i in range(2):
                ctx.value = x
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g

    class NeedsInForward(Function):
        @staticmethod
        def forward(ctx, x):
            if ctx.needs_input_grad[0]:
                x = x * 2.0
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(AdCompileError, match="top level of forward"):
        adcompile.compile(lambda_free_sum(SetsInLoop), backend="python")(np.ones(2))
    with pytest.raises(AdCompileError, match="only in backward"):
        adcompile.compile(lambda_free_sum(NeedsInForward), backend="python")(np.ones(2))


def test_gradgradcheck_of_apply_checks_double_backward_like_pytorch():
    x, w, b = _data(11)
    assert adcompile.gradgradcheck(LinearFunction.apply, (x, w, b))
    assert adcompile.gradgradcheck(Cube.apply, (np.array([0.3, -0.5]),))
    assert adcompile.gradgradcheck(SinCos.apply, (np.array([0.3, -0.5]),))
    with pytest.raises(AdCompileError, match="OnceCube.*once_differentiable"):
        adcompile.gradgradcheck(OnceCube.apply, (np.array([0.3, -0.5]),))
