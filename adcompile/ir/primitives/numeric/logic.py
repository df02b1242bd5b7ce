"""Comparisons and boolean logic: bool-valued, so never differentiable."""
from ..declare import BROADCASTING, CHEAP_AND_SAFE, PIECEWISE_CONSTANT, RECOMPUTABLE, define
from ..type_rules import predicate

_COMPARISONS = {"lt": ("<", "less"), "le": ("<=", None), "gt": (">", "greater"), "ge": (">=", None),
                "eq": ("==", "equal"), "ne": ("!=", None)}
for _name, (_operator, _numpy_name) in _COMPARISONS.items():
    define(_name, predicate, f"_0 {_operator} _1",
           kinds=PIECEWISE_CONSTANT | {BROADCASTING, CHEAP_AND_SAFE, RECOMPUTABLE},
           arity=2, numpy=(_numpy_name,) if _numpy_name else ())


def _scalar_or_numpy(scalar_text, numpy_text):
    return lambda types, params: scalar_text if max(t.ndim for t in types) == 0 else numpy_text


define("not", predicate, _scalar_or_numpy("not _0", "np.logical_not(_0)"),
       kinds=PIECEWISE_CONSTANT | {CHEAP_AND_SAFE}, arity=1, numpy=("logical_not",))
define("and", predicate, _scalar_or_numpy("_0 and _1", "np.logical_and(_0, _1)"),
       kinds=PIECEWISE_CONSTANT | {BROADCASTING, CHEAP_AND_SAFE}, arity=2, numpy=("logical_and",))
define("or", predicate, _scalar_or_numpy("_0 or _1", "np.logical_or(_0, _1)"),
       kinds=PIECEWISE_CONSTANT | {BROADCASTING, CHEAP_AND_SAFE}, arity=2, numpy=("logical_or",))
