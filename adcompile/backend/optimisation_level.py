"""The LLVM optimisation level numba compiles a generated function at: numba's own (-O3) for
ordinary functions, -O2 for functions with many loops.

Why: at -O3 LLVM unswitches loops non-trivially (``SimpleLoopUnswitch``: a loop holding a
branch on a loop-invariant condition becomes one copy of the loop per outcome). The generated
code of a training step has deep nests of fused loops, each holding such branches (bounds
checks, negative-index wraparound), and the copies multiply with the depth: the digits CNN's
``fit_epoch`` (108 loops, nests 6 deep) did not finish compiling in 20 minutes at -O3, and
compiled in 124-153 CPU-seconds at -O2 (or at -O3 with that transformation capped); the
digits MLP's (29 loops) took 28.5 s at -O3 and 21.3 s at -O2, its epochs equally fast. -O2
runs the same vectorisation and the same per-loop optimisations, and gives the same numbers
(numba never enables fast-math here).

A function split into parts (``codegen/function_parts.py``) counts the loops of its parts: they
are compiled inside it (``subroutines.py``) and LLVM optimises them in its module, at its level.
(Before, each part was compiled at its own level and then optimised again, linked into its
three-line caller, at -O3: the Hessian of a random program with 27 loops spent 58 of its 197
CPU-seconds there.)

The rule depends on the generated source only, so a function is compiled at one level in
every process and its cached machine code stays valid. A level below numba's default chosen by
the user (``NUMBA_OPT=0`` or ``1``) is kept.

The level is numba's global ``config.OPT``, read when numba builds its LLVM pass managers
during a compilation; it is set only while this function's compilation holds numba's compiler
lock, so no other compilation sees it.
"""
import ast

# functions with more loops than this compile at -O2 (the MLP's step has 29, a Module's forward
# and the benchmarks' objectives fewer than 16)
MANY_LOOPS = 16
REDUCED_LEVEL = 2


def loop_count(source, *names):
    """The number of ``for`` and ``while`` loops in the functions ``names`` of ``source``."""
    return sum(sum(isinstance(inner, (ast.For, ast.While)) for inner in ast.walk(node))
               for node in ast.parse(source).body if isinstance(node, ast.FunctionDef) and node.name in names)


def level_for(source, name, parts=()):
    """The optimisation level for ``name`` of ``source``, or None for numba's default. A
    function whose ``parts`` are compiled inside it (``subroutines.py``) counts their loops:
    LLVM optimises them in its module, at its level."""
    return REDUCED_LEVEL if loop_count(source, name, *parts) > MANY_LOOPS else None


def compiling_at(dispatcher, level):
    """``dispatcher``, whose compilations run at optimisation ``level`` (None: unchanged)."""
    if level is None or not hasattr(dispatcher, "py_func"):  # (NUMBA_DISABLE_JIT=1: a plain function)
        return dispatcher
    from numba.core import config  # lazy: imports numba
    from numba.core.compiler_lock import global_compiler_lock  # lazy: imports numba
    compile_signature = dispatcher.compile

    def compile(signature):
        with global_compiler_lock:
            default = config.OPT
            if int(default) <= level:  # the user asked for less
                return compile_signature(signature)
            config.OPT = type(default)(level)
            try:
                return compile_signature(signature)
            finally:
                config.OPT = default

    dispatcher.compile = compile
    return dispatcher
