"""Lowering of ``break``, ``continue``, early ``return`` and loop ``else`` to flags and guards.

The IR has structured control flow only (if / for / while without jumps), so before
translation the function's AST is rewritten into the same program without jumps:

    for i in range(n):                    _broke = False
        if x[i] < 0:                      for i in range(n):        # stops once _broke is set
            break                             if x[i] < 0:
        s += x[i]                                 _broke = True
                                              if not _broke:
                                                  s += x[i]

A jump becomes the setting of a flag (``_broke``, ``_continued``, ``_returned``), and the
statements after anything that may have jumped are guarded by ``if not <flag>``. An early
``return e`` becomes ``_result = e; _returned = True`` and the function ends with
``return _result``; the translator gives ``_result`` a placeholder of its type first
(``Translator.result_placeholders``), since the guards assign it on every path at run time but
numba, which drops a loop whose condition it finds constant (``count = 0; while count < 0:``),
may see a path with no assignment. A ``while`` loop that may break or return gets the flags in its
condition; a ``for`` loop that may break or return is marked (``node.stop_flags``) and the
translator runs it as a counted loop that also stops when a flag is set, so it stops on the
same iteration as Python does (the reverse sweep then replays exactly the iterations run).
Functions without jumps are left untouched.
"""
import ast

_LOOPS = (ast.For, ast.While)


def _walk_no_loops(stmts):
    """Statements in ``stmts`` and their nested blocks, not descending into nested loops
    (where break and continue refer to the inner loop)."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, _LOOPS):
            yield from _walk_no_loops(stmt.orelse)
            continue
        if isinstance(stmt, ast.If):
            yield from _walk_no_loops(stmt.body)
            yield from _walk_no_loops(stmt.orelse)


def _has(stmts, kind):
    return any(isinstance(s, kind) for s in _walk_no_loops(stmts))


def _has_return(stmts):
    return any(isinstance(n, ast.Return) for s in stmts for n in ast.walk(s))


def _needs_lowering(fn_node):
    body = fn_node.body
    for node in ast.walk(fn_node):
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(node, _LOOPS) and node.orelse:
            return True
    returns = [n for s in body for n in ast.walk(s) if isinstance(n, ast.Return)]
    return any(r is not body[-1] for r in returns)


class _Loop:
    """The flags of the loop whose body is being lowered."""

    def __init__(self, broke, continued):
        self.broke, self.continued = broke, continued


class _Lowering:
    def __init__(self, fn_node):
        self.fn_node = fn_node
        self.taken = {n.id for n in ast.walk(fn_node) if isinstance(n, ast.Name)}
        self.taken |= {a.arg for a in ast.walk(fn_node) if isinstance(a, ast.arg)}
        self.flags = set()  # names of the flags made here
        self.returned = self.fresh("_returned") if self._has_early_return() else None
        self.result = self.fresh("_result")
        self.last_return = None
        body = fn_node.body
        self.tail = body[-1] if body and isinstance(body[-1], ast.Return) else None

    def _has_early_return(self):
        body = self.fn_node.body
        return any(isinstance(n, ast.Return) and n is not body[-1]
                   for s in body for n in ast.walk(s))

    def fresh(self, base):
        name, k = base, 1
        while name in self.taken:
            k += 1
            name = f"{base}_{k}"
        self.taken.add(name)
        if base != "_result":
            self.flags.add(name)
        return name

    # ------------------------------------------------------------ building blocks
    @staticmethod
    def name(id_, store=False):
        return ast.Name(id_, ast.Store() if store else ast.Load())

    def set_flag(self, flag, value, where):
        return ast.copy_location(ast.Assign([self.name(flag, True)], ast.Constant(value)), where)

    def not_any(self, flags, where):
        """``not f`` or ``not (f1 or f2 ...)``."""
        names = [self.name(f) for f in flags]
        inner = names[0] if len(names) == 1 else ast.BoolOp(ast.Or(), names)
        return ast.copy_location(ast.UnaryOp(ast.Not(), inner), where)

    # ------------------------------------------------------------ the rewrite
    def function(self):
        body = self.fn_node.body
        if self.returned is None:  # no early return: only loops need lowering
            tail = [self.tail] if self.tail is not None else []
            return self.block(body[:len(body) - len(tail)], None) + tail
        out = []
        if self.returned:
            out.append(self.set_flag(self.returned, False, body[0]))
        out += self.block(body, None)
        where = self.last_return or body[-1]
        out.append(ast.copy_location(ast.Return(self.name(self.result)), where))
        return out

    def exits(self, stmt, loop):
        """The flags that ``stmt`` may set and that end the current block."""
        flags = []
        if loop is not None:
            if loop.broke and _has([stmt], ast.Break):
                flags.append(loop.broke)
            if loop.continued and _has([stmt], ast.Continue):
                flags.append(loop.continued)
        if self.returned and _has_return([stmt]):
            flags.append(self.returned)
        return flags

    def block(self, stmts, loop):
        out = []
        for k, stmt in enumerate(stmts):
            flags = self.exits(stmt, loop)
            out += self.statement(stmt, loop)
            rest = stmts[k + 1:]
            if flags and rest:
                if isinstance(stmt, (ast.Break, ast.Continue, ast.Return)):
                    return out  # the rest is unreachable
                guarded = self.block(rest, loop)
                if guarded:
                    out.append(ast.copy_location(ast.If(self.not_any(flags, stmt), guarded, []), stmt))
                return out
        return out

    def statement(self, stmt, loop):
        if isinstance(stmt, ast.Break):
            return [self.set_flag(loop.broke, True, stmt)]
        if isinstance(stmt, ast.Continue):
            return [self.set_flag(loop.continued, True, stmt)]
        if isinstance(stmt, ast.Return):
            return self.return_(stmt)
        if isinstance(stmt, ast.If):
            stmt.body = self.block(stmt.body, loop) or [ast.copy_location(ast.Pass(), stmt)]
            stmt.orelse = self.block(stmt.orelse, loop)
            return [stmt]
        if isinstance(stmt, _LOOPS):
            return self.loop(stmt, loop)
        return [stmt]

    def return_(self, stmt):
        self.last_return = stmt
        value = stmt.value if stmt.value is not None else ast.Constant(None)
        out = [ast.copy_location(ast.Assign([self.name(self.result, True)], value), stmt)]
        if self.returned and stmt is not self.tail:
            out.append(self.set_flag(self.returned, True, stmt))
        return out

    def loop(self, node, outer):
        broke = self.fresh("_broke") if _has(node.body, ast.Break) else None
        continued = self.fresh("_continued") if _has(node.body, ast.Continue) else None
        returns = self.returned if _has_return(node.body) else None
        inner = _Loop(broke, continued)
        body = self.block(node.body, inner)
        if continued:
            body.insert(0, self.set_flag(continued, False, node))
        node.body = body or [ast.copy_location(ast.Pass(), node)]
        stop_flags = [f for f in (broke, returns) if f]
        before = [self.set_flag(broke, False, node)] if broke else []
        if stop_flags:
            if isinstance(node, ast.While):
                test = self.not_any(stop_flags, node)
                node.test = ast.copy_location(ast.BoolOp(ast.And(), [test, node.test]), node.test)
            else:
                node.stop_flags = stop_flags
        orelse = self.block(node.orelse, outer)
        node.orelse = []
        after = []
        if orelse:  # runs when the loop was not left by break (or return)
            after = [ast.copy_location(ast.If(self.not_any(stop_flags, node), orelse, []), node)] \
                if stop_flags else orelse
        return before + [node] + after


def lower_jumps(fn_node):
    """Rewrite ``fn_node`` (an ``ast.FunctionDef``) in place so that it has no break, continue,
    loop else, or return other than its last statement. Returns ``fn_node``."""
    if not fn_node.body or not _needs_lowering(fn_node):
        return fn_node
    lowering = _Lowering(fn_node)
    fn_node.body = lowering.function()
    fn_node.jump_flags = lowering.flags
    fn_node.returns_through_result = lowering.returned is not None  # ends with ``return _result``
    ast.fix_missing_locations(fn_node)
    return fn_node
