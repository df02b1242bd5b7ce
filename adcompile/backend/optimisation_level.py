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

The parts of a split function (``codegen/function_parts.py``) are compiled inside it
(``subroutines.py``) as they were as dispatchers: each at the level of its own loops, then the
module holding the function and its parts at the function's level (numba's -O3 for a function
whose loops are all in its parts). Optimising that module at -O2 instead (the level of all its
loops) cut compile times severalfold (the Hessian of a random program with 27 loops: 201 ->
51 CPU-seconds; the digits CNN's epoch: 757 -> 319) but made the CNN's epochs 1.7 times slower
(455 against 264 ms): the -O3 pass over the module unswitches the loops of its deep nests,
which then vectorise. The -O3 pass is kept.

The rule depends on the generated source only, so a function is compiled at one level in
every process and its cached machine code stays valid. A level below numba's default chosen by
the user (``NUMBA_OPT=0`` or ``1``) is kept.

The level is numba's global ``config.OPT``, read when numba builds its LLVM pass managers
during a compilation; it is set only while this function's compilation holds numba's compiler
lock, so no other compilation sees it.
"""
import ast
import contextlib

# functions with more loops than this compile at -O2 (the MLP's step has 29, a Module's forward
# and the benchmarks' objectives fewer than 16)
MANY_LOOPS = 16
REDUCED_LEVEL = 2


def loop_count(source, name):
    """The number of ``for`` and ``while`` loops in the function ``name`` of ``source``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return sum(isinstance(inner, (ast.For, ast.While)) for inner in ast.walk(node))
    return 0


def level_for(source, name):
    """The optimisation level for ``name`` of ``source``, or None for numba's default."""
    return REDUCED_LEVEL if loop_count(source, name) > MANY_LOOPS else None


@contextlib.contextmanager
def at_level(level):
    """numba compiles at optimisation ``level`` (None: unchanged) while the block runs, holding
    numba's compiler lock; a lower level the user chose is kept."""
    from numba.core import config  # lazy: imports numba
    from numba.core.compiler_lock import global_compiler_lock  # lazy: imports numba
    with global_compiler_lock:
        default = config.OPT
        if level is None or int(default) <= level:  # the user asked for less
            yield
            return
        config.OPT = type(default)(level)
        try:
            yield
        finally:
            config.OPT = default


def compiling_at(dispatcher, level):
    """``dispatcher``, whose compilations run at optimisation ``level`` (None: unchanged)."""
    if level is None or not hasattr(dispatcher, "py_func"):  # (NUMBA_DISABLE_JIT=1: a plain function)
        return dispatcher
    compile_signature = dispatcher.compile

    def compile(signature):
        with at_level(level):
            return compile_signature(signature)

    dispatcher.compile = compile
    return dispatcher
