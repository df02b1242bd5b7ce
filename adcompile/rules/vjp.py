"""Reverse rules, as the transforms still import them: views of the primitive table.

The rules themselves are declared next to their primitives (``ir/primitives/``).
"""
from collections.abc import Mapping

from ..ir.primitives import PRIMITIVES, Kind, ScatterInto, getitem, names_of_kind  # noqa: F401


class _ReverseRules(Mapping):
    """name -> reverse rule of that primitive, read from the table at each lookup."""

    def __getitem__(self, name):
        rule = PRIMITIVES[name].vjp
        if rule is None:
            raise KeyError(name)
        return rule

    def __iter__(self):
        return (name for name, spec in PRIMITIVES.items() if spec.vjp is not None)

    def __len__(self):
        return sum(1 for _ in self)


# kept for transforms/ until it asks the primitive
VJP_RULES = _ReverseRules()
# kept for transforms/ until it asks the primitive
NON_DIFFERENTIABLE = names_of_kind(Kind.NON_DIFFERENTIABLE)
# kept for transforms/ until it asks the primitive
BROADCASTING = names_of_kind(Kind.BROADCASTING)
