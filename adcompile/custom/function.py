"""Custom differentiable Functions with ``ctx`` / ``forward`` / ``backward``, as in PyTorch.

    class MulConstant(adcompile.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None

``MyFn.apply(*args)`` called eagerly (plain Python) runs ``forward`` with a real ``FunctionCtx``
and returns its numpy result. Called from compiled code (or from a function given to ``grad``,
``vjp`` ...), the compiler inlines ``forward`` and uses ``backward`` as the derivative rule of
the call instead of differentiating ``forward``: see ``frontend/custom_functions/call.py`` and
``frontend/custom_functions/backward.py``. This module imports nothing: the frontend recognizes
Functions by their class.
"""


class FunctionCtx:
    """The ``ctx`` of an eager ``apply``: stores what ``forward`` saves, like PyTorch's ctx."""

    def __init__(self, n_inputs):
        self._saved = ()
        self.needs_input_grad = (False,) * n_inputs  # eager calls record no gradient
        self.non_differentiable = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self._saved = tensors

    @property
    def saved_tensors(self):
        return self._saved

    def mark_non_differentiable(self, *outputs):
        self.non_differentiable = outputs

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


class Function:
    """Base class of custom differentiable Functions: subclass it and define the static methods
    ``forward(ctx, *inputs)`` and ``backward(ctx, *grad_outputs)``; call ``MyFn.apply(...)``.
    In compiled code (and in functions given to ``grad``, ``vjp`` ...) ``forward`` is inlined
    and ``backward`` is the derivative rule of the call: ``forward`` is not differentiated.

    >>> import numpy as np, adcompile
    >>> class Cube(adcompile.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x ** 3
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         x, = ctx.saved_tensors
    ...         return grad_output * 3.0 * x ** 2
    >>> Cube.apply(np.array([1.0, 2.0]))  # eagerly: runs forward
    array([1., 8.])
    >>> @adcompile.compile(backend="python")
    ... def total(x):
    ...     return np.sum(Cube.apply(x))
    >>> adcompile.grad(total)(np.array([1.0, 2.0]))  # Cube.backward
    array([ 3., 12.])
    """

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a custom Function must define @staticmethod forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("a custom Function must define @staticmethod backward(ctx, ...)")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` eagerly; inside compiled code this call is compiled instead."""
        ctx = FunctionCtx(len(args) + len(kwargs))
        return cls.forward(ctx, *args, **kwargs)

    def __init__(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__} is a custom Function: call "
                        f"{type(self).__name__}.apply(...) instead of creating an instance")


def once_differentiable(backward):
    """Mark a ``backward`` as differentiable only once: differentiating it again (a second-order
    derivative through this Function) raises an error instead of differentiating its code.

    >>> import numpy as np, adcompile
    >>> class Square(adcompile.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @adcompile.once_differentiable
    ...     def backward(ctx, grad_output):
    ...         x, = ctx.saved_tensors
    ...         return 2.0 * x * grad_output
    >>> @adcompile.compile(backend="python")
    ... def f(x):
    ...     return np.sum(Square.apply(x))
    >>> adcompile.grad(f)(np.array([1.0, 3.0]))
    array([2., 6.])
    >>> adcompile.hessian(f)(np.array([1.0, 3.0]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    adcompile.errors.NoDerivativeRuleError: Square has a @once_differentiable backward and cannot be ...
    ...
    """
    target = getattr(backward, "__func__", backward)  # also accepts a staticmethod object
    target.__adcompile_once_differentiable__ = True
    return backward


def is_once_differentiable(backward):
    return getattr(backward, "__adcompile_once_differentiable__", False)


def is_function_class(value):
    return isinstance(value, type) and issubclass(value, Function) and value is not Function


def function_of(value):
    """The custom Function class of ``MyFn`` or ``MyFn.apply``, else None."""
    if is_function_class(value):
        return value
    owner = getattr(value, "__self__", None)
    if is_function_class(owner) and getattr(value, "__func__", None) is Function.apply.__func__:
        return owner
    return None
