"""Def/use counts of variables, shared by the simplification passes."""
from ..ir.builder import Namer
from ..ir.memory import memory_roots, sharing
from ..ir.nodes import Assign, SetItem, Var, walk


class Uses:
    """How often each variable of ``fn`` is read and assigned, which are written in place, and
    (``with_memory=True``) which share memory with an array written in place: ``stable``."""

    def __init__(self, fn, with_memory=False):
        self.reads, self.defs, self.mutated = {}, {}, set()
        for stmt in walk(fn.body):
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    self.reads[atom] = self.reads.get(atom, 0) + 1
            for var in stmt.writes():
                self.defs[var] = self.defs.get(var, 0) + 1
            if isinstance(stmt, SetItem):
                self.mutated.add(stmt.array)
            if isinstance(stmt, Assign) and stmt.inplace:
                self.mutated.add(stmt.target)
        for atom in fn.results:
            if isinstance(atom, Var):
                self.reads[atom] = self.reads.get(atom, 0) + 1
        self.params = set(fn.params)
        self._memory = None
        if with_memory:
            roots = memory_roots(fn.body, fn.params)
            self._memory = roots, sharing(self.mutated, roots)

    def single_def(self, var):
        return self.defs.get(var, 0) == 1 and var not in self.params and var not in self.mutated

    def unwritten(self, var):
        """Whether neither ``var`` nor memory it shares (a view's base) is written in place
        (as ``fn`` was when these counts were taken)."""
        roots, written = self._memory
        return not sharing({var}, roots) & written

    def stable(self, atom):
        """Whether ``atom`` is a constant, or a variable assigned by at most one statement (a
        parameter counts as one) and never written in place, nor memory it shares."""
        return not isinstance(atom, Var) or (
            self.defs.get(atom, 0) + (atom in self.params) <= 1 and self.unwritten(atom))


def substitute_everywhere(fn, mapping):
    """Replace reads of the Vars in ``mapping`` by their atoms, in every statement and result."""
    if not mapping:
        return
    def sub(atom):
        while isinstance(atom, Var) and atom in mapping:
            atom = mapping[atom]
        return atom
    for stmt in walk(fn.body):
        if isinstance(stmt, Assign):
            stmt.args = [sub(a) for a in stmt.args]
        elif isinstance(stmt, SetItem):
            stmt.value = sub(stmt.value)
            stmt.items = [(item[0], *[sub(p) if p is not None else None for p in item[1:]]) for item in stmt.items]
        for name in ("cond", "start", "stop", "step", "value"):
            if hasattr(stmt, name) and not isinstance(stmt, (Assign, SetItem)):
                try:
                    setattr(stmt, name, sub(getattr(stmt, name)))
                except AttributeError:
                    pass
        if hasattr(stmt, "inputs"):
            stmt.inputs = [sub(a) for a in stmt.inputs]
    fn.results = [sub(a) for a in fn.results]


def namer_for(fn):
    """A Namer holding every name ``fn`` assigns or takes, for a pass that adds variables."""
    namer = Namer()
    for var in list(fn.params) + [v for stmt in walk(fn.body) for v in stmt.writes()]:
        namer.reserve(var.name)
    return namer
