"""Name resolution for ``scipy.special``: which of its functions a global or attribute refers to.

``from scipy.special import erf``, ``import scipy.special as sp; sp.erf`` and
``from scipy import special; special.erf`` all bind the same ufunc object, so, as for numpy,
functions are found by identity. scipy is never imported here (``import adcompile`` stays
fast): a user's function can only refer to scipy.special once the user has imported it, so
the table is built from ``sys.modules`` on the first lookup that finds it there. Every public
name of scipy.special resolves, so that an unsupported one (``special.i0``) is reported by
name; the handlers of the supported ones are in ``special_functions.py``.
"""
import sys

_TABLE = {}  # id(scipy.special module) -> {id(function): "scipy.special.<name>"}


def scipy_special_name(value):
    """``"scipy.special.erf"`` for ``scipy.special.erf`` (any public function of it), else None."""
    module = sys.modules.get("scipy.special")
    if module is None or not callable(value):
        return None
    table = _TABLE.get(id(module))
    if table is None:
        names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
        table = {id(getattr(module, name)): "scipy.special." + name for name in names if hasattr(module, name)}
        _TABLE.clear()
        _TABLE[id(module)] = table
    return table.get(id(value))
