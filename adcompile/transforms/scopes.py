"""Where each variable lives: its definition sites and its innermost enclosing block.

A block is identified by its *path*: the sequence of (statement id, block number) pairs
from the function body down to it. The scope of a variable is the longest common prefix of
the paths of all statements that read or write it; its adjoint is created at the start of
that block's backward sweep.
"""
from ..ir.nodes import For, Var, While


class VarInfo:
    __slots__ = ("defs", "reads", "paths")

    def __init__(self):
        self.defs = []    # (stmt, loop depth, path) of every assignment
        self.reads = []   # (stmt, path) of every read
        self.paths = []


def _common_prefix(paths):
    prefix = list(paths[0])
    for path in paths[1:]:
        n = 0
        while n < min(len(prefix), len(path)) and prefix[n] == path[n]:
            n += 1
        del prefix[n:]
    return tuple(prefix)


class Scopes:
    def __init__(self, fn):
        self.info = {}
        self.loop_paths = set()  # paths of loop bodies
        for p in fn.params:
            self._get(p).paths.append(())
        self._visit(fn.body, (), 0)
        for atom in fn.results:
            if isinstance(atom, Var):
                self._get(atom).reads.append((None, ()))
                self._get(atom).paths.append(())

    def _get(self, var):
        if var not in self.info:
            self.info[var] = VarInfo()
        return self.info[var]

    def _visit(self, block, path, depth):
        for stmt in block:
            for atom in stmt.reads():
                if isinstance(atom, Var):
                    info = self._get(atom)
                    info.reads.append((stmt, path))
                    info.paths.append(path)
            for var in stmt.writes():
                info = self._get(var)
                info.defs.append((stmt, depth, path))
                info.paths.append(path)
            for k, inner in enumerate(stmt.blocks()):
                is_loop = isinstance(stmt, (For, While))
                inner_path = path + ((id(stmt), k),)
                if is_loop:
                    self.loop_paths.add(inner_path)
                self._visit(inner, inner_path, depth + is_loop)

    def scope(self, var):
        info = self.info.get(var)
        return _common_prefix(info.paths) if info and info.paths else ()

    def loop_depth_of_path(self, path):
        return sum(1 for n in range(1, len(path) + 1) if path[:n] in self.loop_paths)

    def is_multiply_defined(self, var, params):
        info = self.info.get(var)
        if info is None:
            return False
        if len(info.defs) + (var in params) > 1:
            return True
        return any(depth > self.loop_depth_of_path(self.scope(var)) for _, depth, _ in info.defs)

    def is_overwritten(self, var, params):
        """True if an assignment to ``var`` may replace a value the program computed before."""
        info = self.info.get(var)
        if info is None:
            return False
        return len(info.defs) + (var in params) > 1 or any(depth > 0 for _, depth, _ in info.defs)

    def single_local_use(self, var):
        """True for a temp defined once and read once, both in the same block."""
        info = self.info.get(var)
        return (info is not None and var.is_temp and len(info.defs) == 1 and len(info.reads) == 1
                and info.defs[0][2] == info.reads[0][1])
