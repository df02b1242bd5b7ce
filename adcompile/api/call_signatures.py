"""Which generated function, for which argument signature, a call runs -- or the last call ran.

Code is generated per argument signature (dtype and ndim of each argument). Given example
arguments, ``adcompile.source``, ``ir``, ``source_path`` and ``ir_stages`` answer for their
signature; without them, for the last signature the function was called with -- or, for a
derived function such as ``grad(f)``, the last one ``f`` (or any function it derives from) was
called with.

Example arguments may include Modules (``source(grad(loss), model, X, y)``): a call with them
runs a flat function of the module's parameter and buffer arrays, which the compiler of Module
arguments (``module_compiler/``, through ``modules/dispatch.py``) names.
"""
from ..errors import CallError
from ..modules.dispatch import module_compiler
from ..modules.module import needs_flat_function


def last_signature(target):
    """The last signature ``target`` or a function it derives from was called with (or None)."""
    while target is not None:
        if target._last_signature is not None:
            return target._last_signature
        target = getattr(target, "base", None)
    return None


def signature_for(target, args, what="source", kwargs=None):
    """The signature of the call ``target(*args, **kwargs)`` -- keywords and defaults bound as
    the call binds them (``_Specialised.call_arguments``) -- or, given no arguments, the last
    one called (see :func:`last_signature`). Module arguments: see :func:`resolve`."""
    return resolve(target, args, what, kwargs)[1]


def resolve(target, args, what="source", kwargs=None):
    """(the function whose generated code the call ``target(*args, **kwargs)`` runs, the
    signature it runs with). That function is ``target`` itself, except when an argument is
    a Module: then, as the call does (``module_compile.run_flattened``), the same transforms
    of the flat function of the module's arrays, with the flat arguments' signature."""
    if args or kwargs:
        args = target.call_arguments(args, kwargs)
        if needs_flat_function(args):  # a Module or a pytree: its leaves are the flat function's arguments
            target, args = module_compiler().flat_target(target, args, what)
        return target, target.signature(args)
    sig = last_signature(target)
    if sig is None:
        params = ", ".join(target.param_names)
        root = target
        while getattr(root, "base", None) is not None:
            root = root.base
        called = f"{target.name} has not been called yet" if root is target else \
            f"neither {target.name} nor {root.name} has been called yet"
        if module_compiler().called_flattened(root):
            called += (" with arguments that are not Modules (a call with a Module runs a function of the "
                       "module's arrays, compiled per model structure)")
        raise CallError(f"adcompile.{what}({target.name}): code is generated per argument signature "
                        f"and {called}; call one of them first, or pass example arguments: "
                        f"adcompile.{what}(fn, {params})")
    return target, sig
