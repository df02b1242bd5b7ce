"""``FILE.py:FUNCTION`` -> the function, as an adcompile function of the chosen backend.

The file is executed as a module named after it (its folder first on ``sys.path``, so it can
import its neighbours), as ``python FILE.py`` would, except that ``__name__`` is not
``"__main__"``: a script's ``main()`` does not run.
"""
import importlib.util
import sys
from pathlib import Path

from ..api.specialised import Specialised
from ..api.compiled import CompiledFunction
from .errors import UsageError


def split_target(text):
    """``"path/file.py:name"`` -> (Path, "name")."""
    path, colon, name = text.rpartition(":")
    if not colon or not path or not name:
        raise UsageError(f"expected FILE.py:FUNCTION, got {text!r}")
    return Path(path), name


def load_module(path):
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    module_name = path.stem if path.stem.isidentifier() else "adcompile_cli_target"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # numba's cache and inspect find the module by name
    spec.loader.exec_module(module)
    return module


def load_function(text, backend=None):
    """The adcompile function named by ``text`` (``FILE.py:FUNCTION``).

    A plain Python function is compiled with ``backend`` (default numba); an
    ``@adcompile.compile`` function keeps its own backend unless ``backend`` is given."""
    path, name = split_target(text)
    module = load_module(path)
    fn = getattr(module, name, None)
    if fn is None:
        available = sorted(key for key, value in vars(module).items()
                           if callable(value) and getattr(value, "__module__", None) == module.__name__
                           or isinstance(value, Specialised))
        raise UsageError(f"{path} has no function {name!r}"
                         + (f" (it defines: {', '.join(available)})" if available else ""))
    if isinstance(fn, CompiledFunction):
        return fn if backend in (None, fn.backend) else CompiledFunction(fn.pyfunc, backend=backend)
    if isinstance(fn, Specialised):
        return fn
    if not callable(fn) or not hasattr(fn, "__code__"):
        raise UsageError(f"{path}:{name} is a {type(fn).__name__}, not a function")
    return CompiledFunction(fn, backend=backend or "numba")
