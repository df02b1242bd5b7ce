"""Who runs calls whose arguments must be flattened: Modules, pytrees, static arguments.

``model(x)``, and ``grad(loss)(model, X, y)`` or any compiled or derived function called with a
Module or a pytree, run a flat function of the leaves, which ``module_compiler/`` builds. That
compiler builds on compiled and derived functions (it makes derived functions of flat
functions), so the three modules below it that must hand it such calls -- ``module.py``
(``model(x)``), ``api/specialised.py`` (every call of a compiled or derived function) and
``api/call_signatures.py`` (``adcompile.source`` with example arguments) -- cannot import it.
Instead, when imported (``adcompile/__init__.py`` imports it), it registers these entry points
here as a :class:`ModuleCompiler`. (The function forms ``jvp``, ``hvp`` and ``vjp``, a layer above
the compiler, call its boundary directly: ``module_compiler/function_forms.py``.)
"""
from dataclasses import dataclass
from typing import Callable

from ..errors import AdCompileError


@dataclass(frozen=True)
class ModuleCompiler:
    """The entry points of the compiler of Module and pytree arguments."""

    call_module: Callable  # (module, args, kwargs): ``model(*args, **kwargs)``
    run: Callable  # (fn, args, extra): a compiled, derived or vmapped function called with Modules or pytrees
    flat_target: Callable  # (target, args, what): (flat function, flat arguments) that a call runs
    called_flattened: Callable  # (compiled function): whether a call of it was flattened


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
