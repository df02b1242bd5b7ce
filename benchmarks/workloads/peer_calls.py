"""How each peer's forward and gradient are called, so workloads only write the function.

JAX calls are jitted and wait for their result (``block_until_ready``); torch forwards run
under ``no_grad`` and gradients use ``torch.autograd.grad`` (nothing accumulates in ``.grad``
between repeated calls); autograd calls are plain. A workload whose "gradient" is more than
one gradient (a training loop, a Hessian) passes it as ``gradient`` instead of ``wrt``.
"""
from importlib.metadata import version

from harness import Implementation


def jax_implementation(jax, function, args, wrt=0, gradient=None):
    """``jax.jit(f)`` and ``jax.jit(jax.grad(f, wrt))`` on device arrays made once."""
    device_args = tuple(jax.numpy.asarray(a) if hasattr(a, "shape") else a for a in args)
    forward = jax.jit(function)
    jitted_gradient = jax.jit(gradient or jax.grad(function, argnums=wrt))
    return Implementation("jax", f"JAX {jax.__version__} (jit)",
                          lambda: jax.block_until_ready(forward(*device_args)),
                          lambda: jax.block_until_ready(jitted_gradient(*device_args)))


def torch_implementation(torch, function, args, wrt=(0,), gradient=None):
    """Eager torch on CPU: ``torch.autograd.grad`` of ``function`` for the ``wrt`` tensors."""
    tensors = tuple(torch.tensor(a) if hasattr(a, "shape") else a for a in args)
    for index in wrt:
        tensors[index].requires_grad_(True)

    def forward():
        with torch.no_grad():
            return function(*tensors)

    def autograd_gradient():
        return torch.autograd.grad(function(*tensors), [tensors[i] for i in wrt])
    call = (lambda: gradient(*tensors)) if gradient else autograd_gradient
    return Implementation("torch", f"PyTorch {torch.__version__.split('+')[0]} (eager)", forward, call)


def autograd_implementation(autograd, function, args, wrt=0, gradient=None):
    gradient = gradient or autograd.grad(function, wrt)
    return Implementation("autograd", f"autograd {version('autograd')} (HIPS)",
                          lambda: function(*args), lambda: gradient(*args))
