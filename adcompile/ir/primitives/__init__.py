"""The primitive set: the ops of the IR, each declared once with everything known about it.

A primitive is what one IR ``Assign`` computes. The frontend lowers all numpy sugar onto
this small set (``np.square(x)`` is ``mul(x, x)``, ``x.mean(axis=0)`` is ``mean`` with a
static ``axis``), the transforms emit the same primitives, and the code generator turns each
into one Python expression through its template.

Each family module declares its primitives with ``declare.define``: name, type rule, template,
kinds, reverse rule next to it, and where the kinds do not imply them the forward, shape and
batch rules, the lowering's facts (fill value, fused accumulator), its value on constants
(``fold``) and the numpy/math/scipy names (and numpy reductions) that are exactly this
primitive. ``record.py`` holds the table and the questions the rest of the compiler asks it
(``PRIMITIVES[name].forward_rule``, ``primitive(name).shape``,
``has_kind(name, Kind.VIEW)``). The families are grouped in four folders:

    numeric/      functions of numbers, element by element
        arithmetic.py  + - * / ** // % and unary minus; the zero-safe products of rules
        logic.py       comparisons, not/and/or
        elementwise.py numpy's unary functions, abs/sign/rounding, maximum, arctan2, hypot, where, clip
        special.py     erf, erfc, erfcx, gammaln, gamma, polygamma (digamma, ...), expit, xlogy
        logistic.py    log(1 / (1 + exp(u))) and log(1 - that), as reverse mode sees them
    arrays/       making, shaping, indexing and converting arrays
        shaping.py     transpose, reshapes, broadcasting, concatenate/stack, getitem, dim/size
        building.py    broadcast_to a shape, triu/tril, split's section length
        creation.py    zeros, ones, full, arange, eye, ...
        conversions.py alias, copy, dtype conversions
        gathers.py     index_add (np.add.at), flatnonzero, triu/tril indices
        bookkeeping.py reverse mode's placeholders, tapes and trip counts
        checks.py      run-time checks left in generated code: a dead product's lengths, memory overlap
    aggregates/   combining many elements
        reductions.py  sum, mean, prod, max, min, norm, argmax/argmin/argsort, cumsum
        scans.py       cumsum along an axis, argsort along an axis, gathers by a permutation
        order_statistics.py  argsort of each row (median, percentile along an axis)
        signals.py     convolve (full), searchsorted
    linalg/       linear algebra
        products.py    matmul, outer, diag, trace
        solve.py       solve, inv, det, slogdet, cholesky
        decompositions.py  eigh, svd, qr (one primitive per returned array)

and the machinery they share is here: ``record.py`` (the table), ``declare.py`` (``define``),
``type_rules.py``, ``shape_rules.py``, ``batching_rules.py``, ``structural_jvp.py`` (forward rules
from the kinds), ``reverse_helpers.py`` (what reverse rules share), ``emission.py`` (templates).
"""
# declared in this order (the table's order, kept from when the families were one folder)
from .numeric import arithmetic  # noqa: F401
from .arrays import shaping, bookkeeping, conversions, creation  # noqa: F401
from .numeric import elementwise  # noqa: F401
from .linalg import products  # noqa: F401
from .numeric import logic  # noqa: F401
from .aggregates import reductions  # noqa: F401
from .arrays import building, gathers  # noqa: F401
from .linalg import decompositions, solve  # noqa: F401
from .aggregates import order_statistics  # noqa: F401
from .arrays import checks  # noqa: F401
from .aggregates import scans, signals  # noqa: F401
from .numeric import special  # noqa: F401
from .numeric import logistic  # noqa: F401
from .emission import placeholder_text, template_for
from .record import (ALL_ARGUMENTS, PRIMITIVES, Accumulator, Kind, Primitive, has_kind, names_of_kind, primitive,
                     result_type)
from .reverse_helpers import ScatterInto, getitem

__all__ = ["ALL_ARGUMENTS", "Accumulator", "PRIMITIVES", "Kind", "Primitive", "ScatterInto", "getitem", "has_kind",
           "names_of_kind", "placeholder_text", "primitive", "result_type", "template_for"]
