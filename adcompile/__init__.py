"""adcompile: a source-to-source automatic differentiation compiler for numeric Python.

    @adcompile.compile
    def loss(w, X, y): ...
    g = adcompile.grad(loss)       # dloss/dw, compiled by numba
    print(adcompile.source(g))     # the readable generated Python (stage="lowered": what numba runs)
"""
from .api.compiled import compile
from .api.derived import grad, value_and_grad
from .backend.cache_folder import clear_cache
from .derivatives.forward import hessian, hvp, jacfwd, jacobian, jacrev, jvp
from .derivatives.pullback import vjp
from .derivatives.vmapping import vmap
from .derivatives import nested as _nested  # noqa: F401  (derivatives callable inside compiled code)
from .derivatives import custom_jvp as _custom_jvp  # noqa: F401  (custom_jvp functions in compiled code)
from .errors import AdCompileError
from .frontend.checkpointed import checkpointed
from .inspection.source import ir, source, source_path
from .inspection.ir_stages import ir_stages
from .checks.gradcheck import gradcheck, gradgradcheck

__all__ = ["compile", "grad", "value_and_grad", "vjp", "jvp", "hvp", "hessian", "jacobian", "jacrev", "jacfwd",
           "vmap", "source", "AdCompileError", "checkpointed", "gradcheck", "gradgradcheck", "clear_cache", "ir",
           "ir_stages", "source_path"]
from .version import __version__  # noqa: E402
from .custom.function import Function, once_differentiable  # noqa: E402
from .custom.stop_gradient import stop_gradient  # noqa: E402
from .custom.rules import custom_jvp, custom_vjp  # noqa: E402

__all__ += ["Function", "once_differentiable", "stop_gradient", "custom_vjp", "custom_jvp"]

# Modules, layers, optimizers and compiled training
from .frontend import static_values as _static_values  # noqa: E402,F401
from .module_compiler import values as _module_values  # noqa: E402,F401
from . import module_compiler as _module_compiler  # noqa: E402,F401  (handles Module arguments: modules/dispatch.py)
from .modules.parameter import Parameter  # noqa: E402
from .modules.module import Module  # noqa: E402

__all__ += ["Parameter", "Module"]
from .training.fitting import fit  # noqa: E402
from .training.loops import backward, batch_order, train_step  # noqa: E402
from . import optim, nn  # noqa: E402,F401
from .modules import init  # noqa: E402,F401
from . import tree  # noqa: E402,F401

__all__ += ["backward", "train_step", "fit", "batch_order", "optim", "init", "nn", "tree"]
