"""Derived functions kept for reuse by the function forms ``hvp``, ``jvp``, ``vjp`` and ``gradcheck``.

Those take a function and its arguments in one call, so without a cache every call would build
the derivative again (IR, transform, simplification, source: milliseconds, where the compiled
call takes microseconds). Here a derived function is kept on the function it is derived from,
keyed by what determines it (the transform, ``wrt``, ``mode``), and a plain Python function is
compiled once and kept in a weak dictionary. A plain function is checked at every use against
what its compile read from it -- its code, defaults, closure cells and the globals its code
names, compared by identity (not what is inside them), and every global, closure cell and
module attribute its translation read, through helpers too (``frontend/external_reads.py``:
``helpmod.K`` read by a helper in another module) -- so a redefined or rebound function (or a
rebound global such as ``k = 2.0``) gets a new compile instead of a stale derivative.
An ``adcompile.compile`` function is its own key: like its calls, its derivatives keep what
its first compile read.
"""
import threading
import weakref

from ..frontend.external_reads import still_hold
from .specialised import Specialised
from .compiled import as_compiled
from .derived_function import DerivedFunction  # (its kinds: derived_kinds.py, which api/derived.py imports)

_MISSING = object()
_lock = threading.Lock()
_compiled_of_plain = weakref.WeakKeyDictionary()  # Python function -> (fingerprint, CompiledFunction)


def _names_used(code):
    """The global names ``code`` and the code nested in it (lambdas, comprehensions) may read."""
    names = set(code.co_names)
    for constant in code.co_consts:
        if hasattr(constant, "co_names"):
            names |= _names_used(constant)
    return tuple(sorted(names))


def _fingerprint(pyfunc, names=None):
    """What a compile of ``pyfunc`` read from it, as objects to compare by identity."""
    code = pyfunc.__code__
    names = _names_used(code) if names is None else names
    scope = pyfunc.__globals__
    cells = tuple(_cell_value(cell) for cell in pyfunc.__closure__ or ())
    return (code, pyfunc.__defaults__, cells, names, tuple(scope.get(name, _MISSING) for name in names))


def _cell_value(cell):
    try:
        return cell.cell_contents
    except ValueError:  # a closure variable not assigned yet
        return _MISSING


def _reads_still_hold(compiled):
    """Whether what every translation of ``compiled`` read from outside it is unchanged."""
    return all(still_hold(getattr(ir, "external_reads", ())) for ir in list(compiled._ir.values()))


def _same(old, new):
    return len(old) == len(new) and all(a is b or (isinstance(a, tuple) and isinstance(b, tuple) and _same(a, b))
                                        for a, b in zip(old, new))


def compiled_function(f):
    """``as_compiled(f)``, the same object at every call while ``f`` is unchanged."""
    if isinstance(f, Specialised):
        return f
    if not hasattr(f, "__code__"):
        return as_compiled(f)  # its clear error
    try:
        fingerprint_then, compiled = _compiled_of_plain[f]
    except (KeyError, TypeError):  # TypeError: not weakly referenceable
        fingerprint_then, compiled = None, None
    if compiled is not None and _same(fingerprint_then, _fingerprint(f, fingerprint_then[3])) \
            and _reads_still_hold(compiled):
        return compiled
    compiled = as_compiled(f)
    try:
        with _lock:
            _compiled_of_plain[f] = (_fingerprint(f), compiled)
    except TypeError:
        pass
    return compiled


def derived_function(base, kind, wrt=None, tangents_only=False, mode="rev"):
    """``DerivedFunction(base, kind, wrt, ...)``, made once per ``base`` and arguments."""
    key = (kind, tuple(wrt) if type(wrt) is list else wrt, tangents_only, mode)
    try:
        return base._derived_functions[key]
    except AttributeError:
        with _lock:
            base.__dict__.setdefault("_derived_functions", {})
    except KeyError:
        pass
    with _lock:
        derived = base._derived_functions.get(key)
        if derived is None:
            derived = base._derived_functions[key] = DerivedFunction(base, kind, wrt, tangents_only=tangents_only,
                                                                     mode=mode)
    return derived
