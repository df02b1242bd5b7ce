"""Symbolic array dimensions: polynomials of the argument dimensions with integer coefficients.

A ``Dim`` is a form like ``x.0 - 1`` or ``x.0 * x.1`` over symbols (``x.0`` is
``x.shape[0]`` of the parameter ``x``, ``n`` an integer parameter; symbols are never
negative). Its value at run time is ``max(form, 0)``, which is what numpy's slicing gives:
``x[1:]`` and ``x[:-1]`` both have ``max(x.0 - 1, 0)`` elements, and slicing again subtracts
again (``max(max(f, 0) - k, 0) == max(f - k, 0)``). Two Dims are provably equal when their
forms are equal. Sums and products are kept symbolic only for forms that cannot be negative
(where ``max(a, 0) + max(b, 0) == max(a + b, 0)``); otherwise the caller asks for an opaque
Dim, which equals only itself.
"""
from dataclasses import dataclass


@dataclass(frozen=True)
class Dim:
    terms: tuple = ()  # ((monomial, coefficient), ...) sorted; a monomial is a sorted tuple of symbols
    offset: int = 0

    @property
    def constant(self):
        """The value, when the Dim is a constant."""
        return None if self.terms else max(self.offset, 0)

    @property
    def is_nonnegative(self):
        """Whether the form can never be negative, so that its value is the form itself."""
        return self.offset >= 0 and all(coefficient > 0 for _, coefficient in self.terms)

    @property
    def symbols(self):
        return {symbol for monomial, _ in self.terms for symbol in monomial}

    def shifted(self, amount):
        """The Dim of this many more elements (negative: fewer, clamped at 0 by the semantics)."""
        return Dim(self.terms, self.offset + amount)

    def __repr__(self):
        return format_dim(self, lambda symbol: symbol) or "?"


def constant(value):
    return Dim((), int(value))


def symbol(name):
    return Dim((((name,), 1),), 0)


def symbol_name(dim):
    """The name of the symbol ``dim`` is (``x.0``, ``max(x.0, y.0)``), or None for another form."""
    if dim.offset == 0 and len(dim.terms) == 1:
        (monomial, coefficient), = dim.terms
        if coefficient == 1 and len(monomial) == 1:
            return monomial[0]
    return None


def renamed(dim, names):
    """``dim`` with each symbol ``s`` replaced by the symbol ``names.get(s, s)``."""
    pairs = [(tuple(sorted(names.get(s, s) for s in monomial)), c) for monomial, c in dim.terms]
    return _collect(pairs, dim.offset)


def _collect(pairs, offset):
    terms = {}
    for monomial, coefficient in pairs:
        terms[monomial] = terms.get(monomial, 0) + coefficient
    return Dim(tuple(sorted((m, c) for m, c in terms.items() if c)), offset)


def add(a, b):
    """``a + b``, or None when either might be negative (the sum of the clamped values is
    then not the clamped sum)."""
    if not (a.is_nonnegative and b.is_nonnegative):
        return None
    return _collect(a.terms + b.terms, a.offset + b.offset)


def multiply(a, b):
    """``a * b``, or None when either might be negative."""
    if not (a.is_nonnegative and b.is_nonnegative):
        return None
    pairs = [(tuple(sorted(ma + mb)), ca * cb) for ma, ca in a.terms for mb, cb in b.terms]
    pairs += [(m, c * b.offset) for m, c in a.terms] + [(m, c * a.offset) for m, c in b.terms]
    return _collect(pairs, a.offset * b.offset)


def difference(a, b):
    """``a - b`` for two forms known to be their values (integers computed by the program,
    e.g. ``n - 1`` in ``range(n - 1)``); None if ``b`` might be negative."""
    if not b.is_nonnegative:
        return None
    return _collect(a.terms + tuple((m, -c) for m, c in b.terms), a.offset - b.offset)


def format_dim(dim, symbol_source):
    """Python text of ``dim``'s form (unclamped), with each symbol as ``symbol_source(name)``;
    None if some symbol has no source."""
    parts = []
    for monomial, coefficient in dim.terms:
        factors = [symbol_source(s) for s in monomial]
        if any(f is None for f in factors):
            return None
        text = " * ".join(factors)
        magnitude = abs(coefficient)
        if magnitude != 1:
            text = f"{magnitude} * {text}"
        parts.append((coefficient < 0, text))
    if dim.offset or not parts:
        parts.append((dim.offset < 0, str(abs(dim.offset))))
    first_negative, first = parts[0]
    text = ("-" if first_negative else "") + first
    for negative, part in parts[1:]:
        text += (" - " if negative else " + ") + part
    return text
