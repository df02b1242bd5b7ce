"""Comparisons and boolean logic: bool-valued, so never differentiable. Each folds on constant
operands (``fold``) into the truth value Python gives."""
import operator

from ..declare import BROADCASTING, CHEAP_AND_SAFE, INLINE_ARITHMETIC, PIECEWISE_CONSTANT, RECOMPUTABLE, define
from ..type_rules import predicate

_COMPARISONS = {"lt": ("<", "less", operator.lt), "le": ("<=", None, operator.le),
                "gt": (">", "greater", operator.gt), "ge": (">=", None, operator.ge),
                "eq": ("==", "equal", operator.eq), "ne": ("!=", None, operator.ne)}
for _name, (_operator, _numpy_name, _fold) in _COMPARISONS.items():
    define(_name, predicate, f"_0 {_operator} _1",
           kinds=PIECEWISE_CONSTANT | {BROADCASTING, CHEAP_AND_SAFE, RECOMPUTABLE, INLINE_ARITHMETIC},
           arity=2, numpy=(_numpy_name,) if _numpy_name else (), fold=_fold)


def _scalar_or_numpy(scalar_text, numpy_text):
    return lambda types, params: scalar_text if max(t.ndim for t in types) == 0 else numpy_text


define("not", predicate, _scalar_or_numpy("not _0", "np.logical_not(_0)"),
       kinds=PIECEWISE_CONSTANT | {CHEAP_AND_SAFE, INLINE_ARITHMETIC}, arity=1, numpy=("logical_not",),
       fold=operator.not_)
define("and", predicate, _scalar_or_numpy("_0 and _1", "np.logical_and(_0, _1)"),
       kinds=PIECEWISE_CONSTANT | {BROADCASTING, CHEAP_AND_SAFE}, arity=2, numpy=("logical_and",),
       fold=lambda a, b: bool(a) and bool(b))
define("or", predicate, _scalar_or_numpy("_0 or _1", "np.logical_or(_0, _1)"),
       kinds=PIECEWISE_CONSTANT | {BROADCASTING, CHEAP_AND_SAFE}, arity=2, numpy=("logical_or",),
       fold=lambda a, b: bool(a) or bool(b))
