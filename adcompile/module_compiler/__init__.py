"""The boundary of Modules and pytrees: ``model(x)``, ``grad(loss_fn)(model, X, y)``,
``grad(loss)(params, X, y)`` with ``params`` a dict -- arguments flattened once at the call,
the transforms taken of a function of the leaves, results rebuilt in the user's terms.

A function one of whose arguments is a Module (``forward(self, x)``, ``loss_fn(model, X, y)``),
a pytree (a tuple, list, dict, namedtuple or registered class; it may hold Modules) or static
(``compile(f, static_argnums=...)``) is compiled as a *flat* function whose arguments are the
leaves: a module's parameter and buffer arrays (in ``named_parameters()`` then
``named_buffers()`` order), a pytree's leaves (in ``adcompile.tree.flatten`` order), each
named after its path (``params_W1``, ``layers_0_b``, ``net_fc1_weight``); a static argument is a
constant of the code. The structures themselves are compile-time information: a module's
classes, plain attributes, ``training`` and which parameters are present (``module_key``), a
pytree's TreeDef; one flat function is compiled per key (``flat_functions.py``). ``values.py``
translates a Module's attribute reads, ``tree_slots.py`` a pytree's item reads.

A derived function called with such arguments is the same chain of transforms of the flat
function (``chains.flat_chain``), each transform with respect to a pytree or Module taken with
respect to all its leaves; its gradients are rebuilt per argument (``chains.regroup``): a
Module's as a dict keyed like ``named_parameters()`` (parameters with ``requires_grad`` only),
a pytree's in its structure; and the results of a derivative of a gradient (``jvp(grad(f))``,
``vjp(grad(f))``) in the structure ``chains.results_tree_of_call`` gives. Calls with pytrees
reuse their structure's plan (``tree_plans``). The function forms ``jvp``, ``hvp``, ``vjp``
flatten through ``function_forms.flat_base``, Hessians and Jacobians with respect to a Module
or pytree, or of a function returning one, are assembled in JAX's structure (``matrices``,
``api/assembled_matrices.py``), ``vmap`` with pytrees in ``mapped``, and derivatives called
inside compiled code with pytree arguments in ``derivatives/nested_trees.py``.

Below this package, ``model(x)`` (``modules/module.py``), every call of a compiled or derived
function (``api/specialised.py``) and ``adcompile.source`` with example arguments reach it
through the entry points it registers in ``modules/dispatch.py``.

A buffer that the compiled code writes into in place (BatchNorm's running statistics) is
state: every function compiled for the module, its derivatives included, writes into the
module's own array (``transforms/arguments.py``), so ``backward``, ``train_step`` and ``fit``
update it as ``model(x)`` does.

The modules, in the order a call meets them: ``tree_keys`` (what compiled code depends on),
``tree_slots`` and ``values`` (pytree and Module arguments in the translated code),
``flat_functions`` (the flat function and its cache), ``calling`` (``model(x)``), ``tree_plans``,
``chains``, ``matrices``, ``gradients``, ``function_forms`` and ``mapped``.
"""
from ..api.specialised import signature_of
from ..modules.dispatch import ModuleCompiler, register_module_compiler
from .calling import call_module, module_backend
from .flat_functions import called_flattened, flat_arguments, flat_function
from .gradients import flat_target, run_flattened
from .tree_keys import TreeStamp, module_key

register_module_compiler(ModuleCompiler(
    call_module=call_module, run=run_flattened,
    flat_target=flat_target, called_flattened=called_flattened))

__all__ = ["call_module", "run_flattened", "flat_function", "flat_arguments", "module_key",
           "signature_of", "module_backend", "TreeStamp"]
