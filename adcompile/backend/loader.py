"""Generated source -> a real module file in the cache folder -> a callable.

Each generated function is written to ``<cache>/<name>_<digest>.py`` (the digest covers the
source and the runtime helpers it calls, so any change gives a new file) and imported from
there, so tracebacks, pdb and ``inspect`` point into readable code. With the numba backend the
function is compiled by ``numba.njit(cache=True)``, whose on-disk cache lets a second process
skip compilation. numba is imported here, lazily, at the first compile.
"""
import hashlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

_LOADED = {}
_RUNTIME_DIGEST = None


def cache_dir():
    override = os.environ.get("ADCOMPILE_CACHE_DIR")
    if override:
        path = Path(override)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        path = Path(base) / "adcompile"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _runtime_digest():
    global _RUNTIME_DIGEST
    if _RUNTIME_DIGEST is None:
        runtime = Path(__file__).resolve().parent.parent / "runtime"
        h = hashlib.sha256()
        for name in sorted(p.name for p in runtime.glob("*.py")):
            h.update((runtime / name).read_bytes())
        _RUNTIME_DIGEST = h.hexdigest()
    return _RUNTIME_DIGEST


def _write_atomically(path, text):
    if path.exists() and path.read_text() == text:
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    os.replace(tmp, path)


def module_path(source, name):
    digest = hashlib.sha256((source + _runtime_digest()).encode()).hexdigest()[:16]
    return cache_dir() / f"{name}_{digest}.py", digest


def load(source, name, backend="numba"):
    """The function ``name`` defined by ``source``: plain Python or numba-compiled."""
    key = (source, name, backend)
    if key in _LOADED:
        return _LOADED[key]
    path, digest = module_path(source, name)
    _write_atomically(path, source)
    module_name = f"_adcompile_generated_{name}_{digest}"
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    fn = getattr(module, name)
    if backend == "numba":
        import numba

        from ..runtime import numba_impls  # noqa: F401  (registers the helpers' numba versions)
        fn = numba.njit(cache=True)(fn)
    elif backend != "python":
        raise ValueError(f"unknown backend {backend!r} (use 'numba' or 'python')")
    _LOADED[key] = fn
    return fn
