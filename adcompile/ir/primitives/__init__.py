"""The primitive set: the ops of the IR, each declared once with everything known about it.

A primitive is what one IR ``Assign`` computes. The frontend lowers all numpy sugar onto
this small set (``np.square(x)`` is ``mul(x, x)``, ``x.mean(axis=0)`` is ``mean`` with a
static ``axis``), the transforms emit the same primitives, and the code generator turns each
into one Python expression through its template.

Each family module declares its primitives with ``declare.define``: name, type rule,
template, kinds, reverse rule next to it, forward rule (derived from the kinds unless given),
and the numpy/math names that are exactly this primitive. ``record.py`` holds the table and
the questions the rest of the compiler asks it (``PRIMITIVES[name].forward_rule``,
``has_kind(name, Kind.VIEW)``, ``names_of_kind(...)``).

    arithmetic.py   + - * / ** // % and unary minus; the zero-safe products of rules
    logic.py        comparisons, not/and/or
    elementwise.py  numpy's unary functions, abs/sign/rounding, maximum, arctan2, hypot, where, clip
    reductions.py   sum, mean, prod, max, min, norm, argmax/argmin/argsort, cumsum
    signals.py      convolve (full), searchsorted
    gathers.py      index_add (np.add.at), flatnonzero, triu/tril indices
    scans.py        cumsum along an axis, argsort along an axis, gathers by a permutation
    linalg_decompositions.py  eigh, svd, qr (one primitive per returned array)
    linalg.py       matmul, outer, diag, trace
    special.py      erf, erfc, gammaln, gamma, polygamma (digamma, ...), expit, xlogy
    linalg_solve.py solve, inv, det, slogdet, cholesky
    arrays.py       transpose, reshapes, broadcasting, concatenate/stack, getitem, dim/size
    conversions.py  alias, copy, dtype conversions
    creation.py     zeros, ones, full, arange, eye, ...
    bookkeeping.py  reverse mode's placeholders, tapes and trip counts
    building.py     broadcast_to a shape, triu/tril, split's section length
    order_statistics.py  argsort of each row (median, percentile along an axis)
    checks.py       run-time checks left in generated code: a dead product's lengths, memory overlap
    batching_rules.py    how each primitive acts on values with a trailing batch axis
"""
from . import arithmetic, arrays, bookkeeping, conversions, creation, elementwise, linalg, logic  # noqa: F401
from . import reductions  # noqa: F401
from . import building, gathers, linalg_decompositions, linalg_solve, order_statistics  # noqa: F401
from . import checks, scans, signals, special  # noqa: F401
from .batching_rules import install_batch_rules
from .emission import placeholder_text, template_for
from .record import ALL_ARGUMENTS, PRIMITIVES, Kind, Primitive, has_kind, names_of_kind, primitive, result_type
from .reverse_helpers import ScatterInto, getitem

install_batch_rules()

__all__ = ["ALL_ARGUMENTS", "PRIMITIVES", "Kind", "Primitive", "ScatterInto", "getitem", "has_kind",
           "names_of_kind", "placeholder_text", "primitive", "result_type", "template_for"]
