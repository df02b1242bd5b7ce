"""adcompile: a source-to-source automatic differentiation compiler for numeric Python.

    @adcompile.compile
    def loss(w, X, y): ...
    g = adcompile.grad(loss)       # dloss/dw, compiled by numba
    print(adcompile.source(g))     # readable generated Python
"""
from .api import compile, grad, value_and_grad
from .backend.cache_folder import clear_cache
from .derivatives import hessian, hvp, jacobian, jvp
from .pullback import vjp
from .vmapping import vmap
from . import nested as _nested  # noqa: F401  (derivatives callable inside compiled code)
from .errors import AdCompileError
from .inspection import ir, source, source_path
from .testing import gradcheck, gradgradcheck

__all__ = ["compile", "grad", "value_and_grad", "vjp", "jvp", "hvp", "hessian", "jacobian", "vmap", "source",
           "AdCompileError", "gradcheck", "gradgradcheck", "clear_cache", "ir", "source_path"]
from .version import __version__  # noqa: E402
from .function import Function, once_differentiable  # noqa: E402

__all__ += ["Function", "once_differentiable"]

# Modules, layers, optimizers and compiled training (issue 10)
from .frontend import static_values as _static_values  # noqa: E402,F401
from . import module_values as _module_values  # noqa: E402,F401
from . import module_compile as _module_compile  # noqa: E402,F401  (handles Module arguments: module_dispatch.py)
from .parameter import Parameter  # noqa: E402
from .module import Module  # noqa: E402

__all__ += ["Parameter", "Module"]
from .training import backward, batch_order, fit, train_step  # noqa: E402
from . import optim, init, nn  # noqa: E402,F401

__all__ += ["backward", "train_step", "fit", "batch_order", "optim", "init", "nn"]
