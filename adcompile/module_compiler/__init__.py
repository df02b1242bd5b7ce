"""Compiling functions of Modules: ``model(x)`` and ``grad(loss_fn)(model, X, y)``.

A function one of whose arguments is a Module (``forward(self, x)``, ``loss_fn(model, X, y)``)
is compiled as a *flat* function whose arguments are the module's parameter and buffer arrays
(in ``named_parameters()`` then ``named_buffers()`` order) in place of the module, followed by
the other arguments. The module tree itself is compile-time information: its classes, its
plain attributes (sizes, flags, strings), ``training`` and which parameters are present make
up ``module_key``, and one flat function is compiled per key (changing such an attribute
compiles again). ``values.py`` translates the attribute reads.

The API below this module (``model(x)`` in ``modules/module.py``, calls of compiled and derived
functions, ``jvp``, ``hvp``, ``vjp``, and ``adcompile.source`` with example arguments) hands
calls with Module arguments to the entry points this module registers in ``modules/dispatch.py``.

Gradients with respect to a Module argument are dicts keyed like ``named_parameters()``
(parameters with ``requires_grad`` only).

A buffer that the compiled code writes into in place (BatchNorm's running statistics) is
state: every function compiled for the module, its derivatives included, writes into the
module's own array (``transforms/arguments.py``), so ``backward``, ``train_step`` and ``fit``
update it as ``model(x)`` does.

The modules, in the order a call meets them: ``tree_keys`` (what compiled code depends on),
``values`` (attribute reads translated), ``flat_functions`` (the flat function and its cache),
``calling`` (``model(x)``), ``gradients``, ``tangents`` and ``matrices`` (derivatives).
"""
from ..api.specialised import signature_of
from ..modules.dispatch import ModuleCompiler, register_module_compiler
from .calling import call_module, module_backend
from .flat_functions import called_with_modules, flat_arguments, flat_function
from .gradients import flat_target, run_with_modules, vjp_with_modules
from .matrices import hessian_with_modules, jacobian_with_modules
from .tangents import hvp_with_modules, jvp_with_modules
from .tree_keys import TreeStamp, module_key

register_module_compiler(ModuleCompiler(
    call_module=call_module, run=run_with_modules, jvp=jvp_with_modules, hvp=hvp_with_modules,
    vjp=vjp_with_modules, jacobian=jacobian_with_modules, hessian=hessian_with_modules,
    flat_target=flat_target, called_with_modules=called_with_modules))

__all__ = ["call_module", "run_with_modules", "hvp_with_modules", "jvp_with_modules", "vjp_with_modules",
           "jacobian_with_modules", "hessian_with_modules", "flat_function", "flat_arguments", "module_key",
           "signature_of", "module_backend", "TreeStamp"]
