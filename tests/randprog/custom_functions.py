"""Catalogue of custom ``adcompile.Function`` classes the generator may use.

Each entry is the class source (a correct hand-written backward), the number of array-shaped
inputs it takes (all of the same shape) and how it maps an input bound to an output bound.
"""
import math

CUSTOM_FUNCTIONS = {
    "Cube": (
        '''
class Cube(adcompile.Function):
    @staticmethod
    def forward(ctx, u):
        ctx.save_for_backward(u)
        return u ** 3

    @staticmethod
    def backward(ctx, grad_out):
        u, = ctx.saved_tensors
        return 3.0 * u ** 2 * grad_out
''', 1, lambda b: b ** 3),
    "SinTimes": (
        '''
class SinTimes(adcompile.Function):
    @staticmethod
    def forward(ctx, u, v):
        ctx.save_for_backward(u, v)
        return np.sin(u) * v

    @staticmethod
    def backward(ctx, grad_out):
        u, v = ctx.saved_tensors
        grad_u = grad_v = None
        if ctx.needs_input_grad[0]:
            grad_u = grad_out * np.cos(u) * v
        if ctx.needs_input_grad[1]:
            grad_v = grad_out * np.sin(u)
        return grad_u, grad_v
''', 2, lambda b: b),
    "ScaledTanh": (
        '''
class ScaledTanh(adcompile.Function):
    @staticmethod
    def forward(ctx, u, scale):
        ctx.scale = scale
        t = np.tanh(scale * u)
        ctx.save_for_backward(t)
        return t

    @staticmethod
    def backward(ctx, grad_out):
        t, = ctx.saved_tensors
        return grad_out * ctx.scale * (1.0 - t * t), None
''', 1, lambda b: 1.0),
    "Softplus": (
        '''
class Softplus(adcompile.Function):
    @staticmethod
    def forward(ctx, u):
        ctx.save_for_backward(u)
        return np.log(1.0 + np.exp(u))

    @staticmethod
    def backward(ctx, grad_out):
        u, = ctx.saved_tensors
        return grad_out / (1.0 + np.exp(-u))
''', 1, lambda b: b + math.log(2.0)),
}
