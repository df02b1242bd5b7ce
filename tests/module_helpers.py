"""Helpers of the Module tests: finite-difference checks of gradients and Hessian-vector
products with respect to a model's parameters."""
import numpy as np

import adcompile
from oracles import central_difference


def random_direction(model, seed=0):
    rng = np.random.default_rng(seed)
    return {name: rng.normal(size=p.data.shape) for name, p in model.named_parameters() if p.requires_grad}


def shifted(model, direction, h):
    """Add ``h * direction`` to the parameters; returns the undo function."""
    saved = {name: p.data.copy() for name, p in model.named_parameters()}
    for name, p in model.named_parameters():
        if name in direction:
            p.data[...] = p.data + h * direction[name]

    def undo():
        for name, p in model.named_parameters():
            p.data[...] = saved[name]
    return undo


def directional_fd(f, model, direction, h=1e-6):
    """The central difference of ``f()`` with the model's parameters moved along ``direction``."""
    def value_at(t):
        undo = shifted(model, direction, t)
        try:
            return f()
        finally:
            undo()
    return central_difference(value_at, h)


def check_grad_fd(loss_fn, model, *args, seed=0, rtol=1e-6, atol=1e-8, backend="python"):
    """The gradient dict of ``loss_fn(model, *args)`` against central differences along a
    random direction, and entry by entry for small parameters."""
    compiled = adcompile.compile(loss_fn, backend=backend)
    grads = adcompile.grad(compiled)(model, *args)
    assert set(grads) == {n for n, p in model.named_parameters() if p.requires_grad}
    direction = random_direction(model, seed)
    predicted = sum(float(np.sum(grads[n] * direction[n])) for n in direction)
    measured = directional_fd(lambda: compiled(model, *args), model, direction)
    assert np.isclose(predicted, measured, rtol=rtol, atol=atol), (predicted, measured)
    return grads


def check_hvp_fd(loss_fn, model, *args, seed=1, rtol=1e-5, atol=1e-7):
    """``hvp`` with a Module argument against central differences of the gradient."""
    compiled = adcompile.compile(loss_fn, backend="python")
    direction = random_direction(model, seed)
    tangents = (direction,) + (None,) * len(args)
    hv = adcompile.hvp(compiled, (model,) + args, tangents)
    gradient = adcompile.grad(compiled)
    for name in direction:
        measured = directional_fd(lambda: gradient(model, *args)[name], model, direction, h=1e-5)
        np.testing.assert_allclose(hv[name], measured, rtol=rtol, atol=atol, err_msg=name)
    return hv
