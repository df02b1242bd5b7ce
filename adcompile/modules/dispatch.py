"""Who compiles calls with Module (and pytree) arguments.

``model(x)``, and ``grad(loss)(model, X, y)`` or any transform called with a Module argument,
run a flat function of the module's parameter and buffer arrays, which ``module_compiler/``
builds. That compiler builds on the public API (it makes derived functions of flat functions),
so the modules it builds on -- ``module.py``, ``api.py``, ``derivatives.py``, ``pullback.py``
and ``call_signatures.py`` -- cannot import it. Instead, when imported (``adcompile/__init__.py``
imports it), it registers its entry points here as a :class:`ModuleCompiler`, and those modules
hand calls with Modules to :func:`module_compiler`.
"""
from dataclasses import dataclass
from typing import Callable

from ..errors import AdCompileError


@dataclass(frozen=True)
class ModuleCompiler:
    """The entry points of the compiler of Module arguments."""

    call_module: Callable  # (module, args, kwargs): ``model(*args, **kwargs)``
    run: Callable  # (fn, args, extra): a compiled or derived function called with Modules
    jvp: Callable  # (f, primals, tangents), a Module's tangent a dict
    hvp: Callable  # (f, primals, tangents), a Module's tangent a dict
    vjp: Callable  # (f, args, wrt): (out, pullback)
    jacobian: Callable  # (f, index, mode, args): with respect to the Module argument ``index``
    hessian: Callable  # (f, index, args): with respect to the Module argument ``index``
    flat_target: Callable  # (target, args, what): (flat function, flat arguments) that a call runs
    called_with_modules: Callable  # (compiled function): whether a call gave it a Module argument


_registered = []


def register_module_compiler(compiler):
    """Make ``compiler`` handle calls with Module arguments (``module_compiler/`` calls this)."""
    _registered[:] = [compiler]


def module_compiler():
    """The registered :class:`ModuleCompiler`."""
    if not _registered:
        raise AdCompileError("calls with Module arguments need adcompile.module_compiler, which registers "
                             "itself when imported; import adcompile (which imports it)")
    return _registered[0]
