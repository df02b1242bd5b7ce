"""A custom Function with a wrong backward, for docs/cli.md's failing ``adcompile check``."""
import numpy as np

import adcompile


class Cube(adcompile.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return g * 3.0 * x  # wrong on purpose: the derivative of x ** 3 is 3 x ** 2


def cubes(x):
    return np.sum(Cube.apply(x))
