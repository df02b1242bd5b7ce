"""Custom differentiable Functions, ported from the PyTorch tutorial to numpy + adcompile.

The tutorial's LinearFunction, MulConstant and Linear module, with only the tensor calls
changed (``input @ weight.T`` for ``input.mm(weight.t())``, ``bias[None, :]`` for
``bias.unsqueeze(0).expand_as(output)``); then a numerically stable log-sum-exp, the reason
people write custom Functions. Prints results, gradient checks and generated source.
"""
import numpy as np

import adcompile
from adcompile import Function


# Inherit from Function
class LinearFunction(Function):
    # Note that both forward and backward are @staticmethods
    @staticmethod
    # bias is an optional argument
    def forward(ctx, input, weight, bias=None):
        ctx.save_for_backward(input, weight, bias)
        output = input @ weight.T
        if bias is not None:
            output += bias[None, :]
        return output

    # This function has only a single output, so it gets only one gradient
    @staticmethod
    def backward(ctx, grad_output):
        # Unpack saved_tensors and initialize all gradients w.r.t. inputs to None; thanks to
        # trailing Nones being ignored, the return statement is simple.
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        # These needs_input_grad checks are optional; in adcompile they are decided at compile
        # time, so a branch whose gradient is not needed is not even generated.
        if ctx.needs_input_grad[0]:
            grad_input = grad_output @ weight
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.T @ input
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        # ctx is a context object that can be used to stash information for backward
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        # As many input gradients as there were arguments; non-array arguments get None.
        return grad_output * ctx.constant, None


class Linear:
    """The tutorial's ``nn.Module``: parameters are numpy arrays here."""

    def __init__(self, input_features, output_features, bias=True, seed=0):
        rng = np.random.default_rng(seed)
        self.input_features = input_features
        self.output_features = output_features
        # Not a very smart way to initialize weights
        self.weight = rng.uniform(-0.1, 0.1, (output_features, input_features))
        self.bias = rng.uniform(-0.1, 0.1, output_features) if bias else None

    def forward(self, input):
        return LinearFunction.apply(input, self.weight, self.bias)

    __call__ = forward

    def extra_repr(self):
        return (f"in_features={self.input_features}, out_features={self.output_features}, "
                f"bias={self.bias is not None}")


class LogSumExp(Function):
    """log(sum(exp(x))) computed stably, with softmax (from the saved output) as gradient."""

    @staticmethod
    def forward(ctx, x):
        m = np.max(x)
        out = m + np.log(np.sum(np.exp(x - m)))
        ctx.save_for_backward(x, out)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        x, out = ctx.saved_tensors
        return grad_output * np.exp(x - out)


@adcompile.compile
def linear_loss(input, weight, bias, target):
    output = LinearFunction.apply(input, weight, bias)
    return np.mean((output - target) ** 2)


@adcompile.compile
def scaled_loss(x):
    return np.sum(MulConstant.apply(x, 3.0) ** 2)


@adcompile.compile
def naive_logsumexp(x):
    return np.log(np.sum(np.exp(x)))


@adcompile.compile
def stable_logsumexp(x):
    return LogSumExp.apply(x)


def main():
    rng = np.random.default_rng(0)
    layer = Linear(3, 2)
    print("Linear:", layer.extra_repr())
    x = rng.standard_normal((8, 3))
    target = rng.standard_normal((8, 2))
    print("eager forward (plain numpy) :", layer(x)[0])
    print("compiled loss               :", linear_loss(x, layer.weight, layer.bias, target))

    print("gradcheck LinearFunction    :",
          adcompile.gradcheck(linear_loss, (x, layer.weight, layer.bias, target), wrt=(0, 1, 2)))
    print("gradcheck MulConstant       :", adcompile.gradcheck(scaled_loss, (x[0],)))
    # As PyTorch recommends for hand-written backwards: check the Function itself
    print("gradcheck(LinearFunction.apply)    :",
          adcompile.gradcheck(LinearFunction.apply, (x, layer.weight, layer.bias)))
    print("gradgradcheck(LinearFunction.apply):",
          adcompile.gradgradcheck(LinearFunction.apply, (x, layer.weight, layer.bias)))

    only_weight = adcompile.grad(linear_loss, wrt="weight")
    print("\nGradient with respect to weight only: the grad_input and grad_bias branches of "
          "backward are not generated.\n")
    print(adcompile.source(only_weight, x, layer.weight, layer.bias, target))

    step = adcompile.grad(linear_loss, wrt=(0, 1, 2))  # the gradient gradcheck compiled above
    for _ in range(100):
        _, gw, gb = step(x, layer.weight, layer.bias, target)
        layer.weight -= 0.1 * gw
        layer.bias -= 0.1 * gb
    print("loss after 100 gradient steps:", linear_loss(x, layer.weight, layer.bias, target))

    big = np.array([1000.0, 999.0, 998.5])
    with np.errstate(over="ignore", invalid="ignore"):
        print("\nnaive log-sum-exp gradient  :", adcompile.grad(naive_logsumexp)(big))
    print("custom log-sum-exp gradient :", adcompile.grad(stable_logsumexp)(big))
    print("gradcheck LogSumExp         :", adcompile.gradcheck(stable_logsumexp, (big,)))


if __name__ == "__main__":
    main()
