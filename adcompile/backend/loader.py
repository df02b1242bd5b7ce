"""Generated source -> a real module file in the cache folder -> a callable.

Each generated function is written to ``<cache>/<name>_<digest>.py`` (see :mod:`.cache_key`)
and its module is executed from the source text in memory, so what runs is exactly what was
generated, while tracebacks, pdb and ``inspect`` point into the readable file. With the numba
backend the function is compiled by ``numba.njit`` with the checked disk cache of
:mod:`.numba_cache` (when the cache folder is persistent), so a second process skips
compilation. numba is imported here, lazily, at the first compile.

Run as Python (``backend="python"``, and the first tier of ``tiers.py``), the generated code's
runtime helpers ``rt`` are numba-free (``runtime/zero_safe_numpy.py``), so it never waits for numba.

Both backends follow numpy's rules for a division by zero (inf or nan, never an exception): numba
compiles with ``error_model="numpy"`` (unless the caller asks otherwise), and the Python backend
gets its scalar arguments as numpy scalars (:mod:`.numpy_scalars`). Both raise ``IndexError``
for an index out of range: numba compiles with ``boundscheck=True`` unless the caller asks
otherwise (``adcompile.compile(f, boundscheck=False)``, whose generated source says so, so that
checked and unchecked machine code never share a cache file).

``load`` is thread-safe; it is cheap (numba compiles at the first call, under its own lock).
"""
import importlib.util
import sys
import threading

# cache_dir is imported from here by function_checks
from .cache_folder import (NUMBA_SUBFOLDER, cache_dir, cache_location, on_clear, refuse,  # noqa: F401
                           warn_unwritable)
from ..codegen.function_parts import PART_MARK
from ..runtime.helper_cache import use_cache_folder
from ..runtime.zero_safe_numpy import python_helpers
from .cache_key import module_file_name
from .numpy_scalars import with_numpy_scalar_arguments
from .names import safe_name
from . import subroutines
from .allocator import keep_freed_memory
from .optimisation_level import compiling_at, level_for
from .source_files import discard_numba_cache, ensure_source_file
from .trust import Untrusted, ensure_folder

BACKENDS = ("numba", "python")

_lock = threading.Lock()
_loaded = {}



def _gate_helper_folder(folder):
    from .numba_cache import govern_helper_folder  # lazy: imports numba
    govern_helper_folder(folder)


# the runtime helpers' numba cache goes into the cache folder too, through the gate (see
# runtime/helper_cache.py and numba_cache.py)
use_cache_folder(lambda: cache_location()[0] / NUMBA_SUBFOLDER, _gate_helper_folder)


@on_clear
def forget_loaded():
    """Forget the loaded functions, so that the next ``load`` writes its file again."""
    with _lock:
        _loaded.clear()


def _execute_module(module_name, path, source):
    module = sys.modules.get(module_name)
    if module is None or module.__file__ != str(path):  # new, or made in another cache folder
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        # numba's cache needs the module importable by name in every process that uses it
        sys.modules[module_name] = module
        try:
            exec(compile(source, str(path), "exec"), module.__dict__)
        except BaseException:
            del sys.modules[module_name]
            raise
    return module


def _numba_compiled(fn, source, path, persistent, options):
    """``fn`` (defined by ``source``) jitted with ``options``, compiled at the optimisation
    level its loops ask for (:mod:`.optimisation_level`), with the checked disk cache when
    ``persistent``; so are the parts a long function was cut into (``codegen/function_parts.py``),
    which it calls by their module-level names: subroutines compiled inside it
    (:mod:`.subroutines`), or, with options subroutines do not support, dispatchers of their own."""
    namespace = fn.__globals__
    jitted = _jitted(fn, path, persistent, options)
    if not hasattr(jitted, "py_func"):  # NUMBA_DISABLE_JIT=1: plain functions
        return jitted
    as_subroutines = subroutines.supported(jitted.targetoptions)
    for part_name in sorted(name for name in namespace if name.startswith(fn.__name__ + PART_MARK)):
        part, level = namespace[part_name], level_for(source, part_name)
        namespace[part_name] = (subroutines.subroutine(part, jitted.targetoptions, level) if as_subroutines
                                else compiling_at(_jitted(part, path, persistent, options), level))
    return compiling_at(jitted, level_for(source, fn.__name__))


def _jitted(fn, path, persistent, options):
    import numba  # lazy: numba takes ~0.3 s to import

    from ..runtime import numba_impls  # noqa: F401  (lazy: registers the helpers' numba versions)
    keep_freed_memory()  # a warm cache's process reuses freed arrays as a compiling one does
    from .numba_cache import njit_with_disk_cache, recompiling_after_damaged_helper_files  # lazy: imports numba
    if persistent:
        try:
            ensure_folder(path.parent, path.parent / NUMBA_SUBFOLDER)
            discard_numba_cache(path, only_untrusted=True)
            return recompiling_after_damaged_helper_files(njit_with_disk_cache(fn, **options))
        except Untrusted as error:  # the folder changed since it was checked: compile without it
            refuse(error.reason)
    return recompiling_after_damaged_helper_files(numba.njit(cache=False, **options)(fn))


def _written(path, persistent, source):
    """``(path, persistent)`` once ``source`` is in the file ``path``, or, if the cache folder
    turns out untrusted meanwhile, in the same file of the private folder it is refused for.
    A folder that cannot be written (full, read-only) gives ``(path, False)`` with no file: the
    module runs from its text in memory and numba compiles it without a disk cache."""
    try:
        try:
            ensure_source_file(path, source)
            return path, persistent
        except Untrusted as error:
            refuse(error.reason)
        folder, persistent = cache_location()
        ensure_source_file(folder / path.name, source)
        return folder / path.name, persistent
    except OSError as error:
        warn_unwritable(path.parent, error)
        return path, False


def load(source, name, backend="numba", options=None):
    """The function ``name`` defined by ``source``: plain Python or numba-compiled (with
    ``numba.njit`` ``options``, e.g. those the fused loops of ``lowering/`` ask for)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r} (use 'numba' or 'python')")
    options = {"error_model": "numpy", "boundscheck": True, **(options or {})}
    with _lock:
        folder, persistent = cache_location()
        key = (source, name, backend, folder, tuple(sorted(options.items())))
        fn = _loaded.get(key)
        if fn is None:
            file_name, digest = module_file_name(source, name, backend)
            path, persistent = _written(folder / file_name, persistent, source)
            module = _execute_module(f"_adcompile_generated_{safe_name(name)}_{digest}", path, source)
            fn = getattr(module, name)
            if backend == "numba":
                fn = _numba_compiled(fn, source, path, persistent, options)
            else:
                if hasattr(module, "rt"):  # run as Python: the zero-safe products in numpy, not numba's
                    module.rt = python_helpers()
                fn = with_numpy_scalar_arguments(fn)
            _loaded[key] = fn
        return fn
