"""The names the generated source gives the IR's variables: their own, except where numba
would confuse two of them.

numba gives every assignment after the first to a name a version of its own, ``dt`` -> ``dt.2``
(``numba/core/ssa.py``, ``Scope.redefine``), and when it compiles an array expression it
renames each variable of the expression once more and turns the dots into underscores
(``numba/np/ufunc/array_exprs.py``, ``_legalize_parameter_names``): ``dt.2`` becomes
``dt_2_2``. A variable really named ``dt_2`` becomes ``dt_2_2`` too when its own counter is
at 2, and numba stops with ``'dt_2_2' not unique``. The IR's fresh names are exactly of that
form (``Namer`` hands out ``dt``, ``dt_1``, ``dt_2``, ...), and a fused loop's guard assigns
the same names in both branches, so the pair is common. The rule kept here: a name ``A_<k>``
(``k`` digits) is not used while ``A`` is assigned more than once; it is written ``A<k>``
instead (``dt_2`` -> ``dt2``), which no version of any name can be turned into.
"""
import re
from collections import Counter

from ..ir.nodes import Assign, For, Pop, Var, walk

_NUMBERED = re.compile(r"(.+)_(\d+)")


def _definitions(fn):
    """How many statements assign each name (a parameter counts as one)."""
    count = Counter(p.name for p in fn.params)
    for stmt in walk(fn.body):
        if isinstance(stmt, (Assign, Pop)):
            count[stmt.target.name] += 1
        elif isinstance(stmt, For):
            count[stmt.index.name] += 1
    return count


def _names(fn):
    names = {p.name for p in fn.params}
    for stmt in walk(fn.body):
        for atom in [*stmt.reads(), *stmt.writes()]:
            if isinstance(atom, Var):
                names.add(atom.name)
    return names


def _follows_a_versioned_name(name, names, definitions):
    """Whether ``name`` is ``A_<k>`` for a name ``A`` in ``names`` that numba versions."""
    numbered = _NUMBERED.fullmatch(name)
    return bool(numbered) and numbered.group(1) in names and definitions[numbered.group(1)] > 1


class _NameSet:
    """The names in use, with how many of them are ``A_<k>`` for each ``A``, so that asking
    whether a name has numbered versions is a look-up, not a scan of every name (a scan per
    renamed name made long programs quadratic)."""

    def __init__(self, names):
        self.names = set()
        self.numbered = Counter()
        for name in names:
            self.add(name)

    def __contains__(self, name):
        return name in self.names

    def add(self, name):
        if name not in self.names:
            self.names.add(name)
            numbered = _NUMBERED.fullmatch(name)
            if numbered:
                self.numbered[numbered.group(1)] += 1

    def discard(self, name):
        if name in self.names:
            self.names.remove(name)
            numbered = _NUMBERED.fullmatch(name)
            if numbered:
                self.numbered[numbered.group(1)] -= 1


def _clashes(spelling, assignments, names, definitions):
    """Whether ``spelling`` for a name assigned ``assignments`` times could meet a version of
    another name."""
    if spelling in names or _follows_a_versioned_name(spelling, names, definitions):
        return True
    return assignments > 1 and names.numbered[spelling] > 0


def written_names(fn):
    """``{IR name: name in the source}`` for the names that must be written differently."""
    definitions = _definitions(fn)
    all_names = _names(fn)
    names = _NameSet(all_names)
    taken = set(all_names)
    renamed = {}
    for name in sorted(all_names, key=lambda n: (len(n), n)):  # ``A_2`` is settled before ``A_2_1``
        if not _follows_a_versioned_name(name, names, definitions):
            continue
        names.discard(name)
        base = "".join(name.rpartition("_")[::2])
        spelling, k = base, 0
        while spelling in taken or _clashes(spelling, definitions[name], names, definitions):
            k += 1
            spelling = f"{base}v{k}"
        definitions[spelling] = definitions[name]
        names.add(spelling)
        taken.add(spelling)
        renamed[name] = spelling
    return renamed
