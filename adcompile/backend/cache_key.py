"""The name of a generated module's file: ``<name>_<digest>.py``.

The generated source is rebuilt from the user's code in every process, so it already depends on
the source of the function, of every helper and custom Function it inlines, and on the argument
signature it was specialised for. The digest adds what changes the compiled code without
changing that text: the backend, the versions of adcompile, numba and numpy, and the source of
adcompile's runtime helpers (which the generated code calls) and of this backend (the njit
options and the numba cache format). numba's own cache index is keyed by the file's path and
modification time, so a new digest also means a fresh numba cache.
"""
import hashlib
from pathlib import Path

import numpy as np

from .. import version
from ..runtime.helper_cache import folder_digest
from .names import safe_name

_PACKAGE = Path(__file__).resolve().parent.parent
_code_digest = None


def _adcompile_code_digest():
    """sha256 over the runtime helpers and the backend, computed once per process."""
    global _code_digest
    if _code_digest is None:
        _code_digest = folder_digest([_PACKAGE / "runtime", _PACKAGE / "backend"])
    return _code_digest


def _versions(backend):
    versions = [f"adcompile={version.__version__}", f"numpy={np.__version__}"]
    if backend == "numba":
        import numba  # lazy: numba takes ~0.3 s to import
        versions.append(f"numba={numba.__version__}")
    return versions


def source_digest(source, backend):
    """16 hex digits identifying ``source`` compiled by ``backend`` with this installation."""
    parts = [f"backend={backend}", *_versions(backend), _adcompile_code_digest(), source]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def module_file_name(source, name, backend):
    """``(file name, digest)``: the name made safe (:mod:`.names`: never a path)."""
    digest = source_digest(source, backend)
    return f"{safe_name(name)}_{digest}.py", digest
