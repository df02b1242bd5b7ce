"""The parts of a split function (``codegen/function_parts.py``) compiled once, inside the
function that calls them.

Why: a call from one numba function to another ``numba.njit`` function links the callee's
*finished* library into the caller's: numba first optimises and code-generates the callee on its
own (it is a dispatcher, callable from Python), then links a copy of its optimised IR into the
caller, and optimises and code-generates the lot again. A split function's parts are called only
by it, so every part went through LLVM twice: of the 197 CPU-seconds the Hessian of a random
program (two parts) took, 106 went to the parts' own libraries and 58 to the three-line caller,
which is the parts' code once more.

Here a part is an ``intrinsic`` of numba: typing a call compiles the part with numba's pipeline
but without finishing it (``no_compile``: typed, lowered to LLVM IR, its functions optimised one
by one, as numba's own subroutines are), then runs on it what numba's ``finalize`` runs before
machine code (its libraries linked in, the module passes); lowering the call links that IR into
the caller's library and calls it with numba's internal calling convention, exactly as a call of
a dispatcher is lowered. The caller's library then optimises and code-generates everything, as
before; what is saved is each part's machine code of its own, which nothing ran. Invariants
this relies on:

- a part is compiled with the flags of its caller's dispatcher (``parse_as_flags`` of its
  ``targetoptions``, as the dispatcher does), so error model, bounds checks and fast-math are
  those the generated code asked for; it is optimised at its own level (numba builds a
  library's pass managers within the part's compile), the whole at the caller's, so the IR the
  caller links and optimises is the IR it linked when the part was a dispatcher;
- the part's functions keep their own LLVM functions (``linkonce_odr``, as numba links any
  library), so LLVM optimises each as before rather than one merged giant function: a
  ``linkonce_odr`` function is not inlined for having one caller (only local functions get
  that bonus) and a part is far above the inlining threshold;
- the caller's library holds all the machine code, so its disk cache entry is self-contained
  (a cache hit needs no part);
- the IR of a part, once compiled for some argument types, is linked as a copy into each caller
  compiled with them, never finished itself.

Functions compiled with ``parallel=True`` keep dispatcher parts (parfors lower gufuncs of
their own; not worth the risk for an option that is off by default).
"""
import inspect

from .optimisation_level import at_level


def subroutine(py_func, targetoptions, level=None):
    """An intrinsic calling ``py_func`` compiled (per argument types) as a subroutine of the
    numba function that calls it, with the flags of a dispatcher of ``targetoptions``, its
    functions optimised at ``level`` (``optimisation_level.at_level``)."""
    from numba.core import compiler, typing  # lazy: imports numba
    from numba.core.compiler_lock import global_compiler_lock  # lazy: imports numba
    from numba.core.registry import cpu_target  # lazy: imports numba
    from numba.extending import intrinsic  # lazy: imports numba

    compiled = {}  # argument types -> numba's compile result, its library never finished

    def compile_for(typingctx, args):
        with global_compiler_lock, at_level(level):
            cres = compiled.get(args)
            if cres is None:
                flags = compiler.Flags()
                cpu_target.options.parse_as_flags(flags, targetoptions)
                flags.no_compile = True  # lowered and its functions optimised, never finished
                flags.no_cpython_wrapper = True
                flags.no_cfunc_wrapper = True
                context = cpu_target.target_context
                library = context.codegen().create_library(py_func.__qualname__)
                cres = compiler.compile_internal(typingctx, context, library, py_func, args, None, flags,
                                                 locals={})
                _optimise_unfinished(library)
                compiled[args] = cres
            return cres

    def typer(typingctx, *args):
        cres = compile_for(typingctx, tuple(args))
        signature = typing.signature(cres.signature.return_type, *args)

        def codegen(context, builder, sig, llargs):
            context.active_code_library.add_linking_library(_Unfinished(cres.library))
            return context.call_internal(builder, cres.fndesc, cres.signature, llargs)

        return signature, codegen

    typer.__name__ = py_func.__name__
    # numba folds a call's arguments with the typer's signature: the part's, after the context
    parameters = [inspect.Parameter("typingctx", inspect.Parameter.POSITIONAL_OR_KEYWORD),
                  *inspect.signature(py_func).parameters.values()]
    typer.__signature__ = inspect.Signature(parameters)
    return intrinsic(typer)


# methods of numba's code library used here that are not numba's public API (numba 0.59-0.68; the
# library's ``_final_module``, ``_linking_libraries`` and ``_reload_init`` come with them)
_LIBRARY_METHODS = ("_optimize_final_module", "_get_module_for_linking")


def supported(targetoptions):
    """Whether parts of a function of these numba options can be subroutines: not with
    ``parallel=True``, nor with a numba whose code library lacks the methods used here (then the
    parts stay dispatchers, compiled as before)."""
    from numba.core import codegen  # lazy: imports numba

    return not targetoptions.get("parallel") and all(hasattr(codegen.CPUCodeLibrary, name)
                                                     for name in _LIBRARY_METHODS)


def _optimise_unfinished(library):
    """What numba's ``finalize`` does to ``library`` before it makes machine code: link the
    libraries it uses into its module, then run the module passes (at the level in force). The
    IR a caller links is then the IR it linked when the part was a dispatcher."""
    for linked in _unique(library._linking_libraries):
        library._final_module.link_in(linked._get_module_for_linking(), preserve=True)
    library._optimize_final_module()
    library._final_module.verify()


class _Unfinished:
    """A library numba compiled with ``no_compile`` and ``_optimise_unfinished`` optimised, as
    its callers link it: its defined functions ``linkonce_odr`` (as numba's
    ``_get_module_for_linking`` makes them, so that several callers' copies coexist in the JIT).
    It is never finished: no machine code of its own. Linking happens in the caller's
    ``finalize``, once the caller's IR that calls it is in (LLVM links a ``linkonce_odr``
    function only where it is referenced)."""

    def __init__(self, library):
        self._library = library
        self._module = None
        linked = _unique(library._linking_libraries)
        self._reload_init = set(library._reload_init).union(*(lib._reload_init for lib in linked))

    def _ensure_finalized(self):
        """Nothing to finish: numba calls this when the library is added for linking."""

    def _get_module_for_linking(self):
        from llvmlite import binding as ll  # lazy: llvmlite, numba's LLVM binding (loads LLVM)

        if self._module is None:
            module = self._library._final_module.clone()  # its libraries linked in already
            for fn in module.functions:
                if not fn.is_declaration and fn.linkage == ll.Linkage.external:
                    fn.linkage = "linkonce_odr"
            self._module = module
        return self._module


def _unique(libraries):
    seen = []
    for library in libraries:
        if library not in seen:
            seen.append(library)
    return seen
