"""Python AST -> typed IR, for one argument signature.

The translator walks the user's function once per signature (dtype and ndim of each
argument), binding names to IR atoms or to compile-time values (tuples, ranges, modules).
Straight-line top-level code is put in single-assignment form (``x = x * 2`` becomes
``x_1 = x * 2``); names assigned inside loops and branches stay mutable variables, so a loop
of the user's code stays a loop. If a variable's type widens inside a loop (``s = 0`` then
``s += x[i]``), translation restarts with the wider type.
"""
import ast

import numpy as np

from ..errors import AdCompileError, TypeMismatchError, UnsupportedSyntaxError, located
from ..ir.builder import Builder, Namer, const
from ..ir.nodes import Assign, Const, For, Function, If, SetItem, Var, While
from ..ir.types import B1, F8, I8, Type, type_of_value
from . import calls
from .indexing import index_params
from .lowering import lower_jumps
from .resolve import DTypeRef, FuncRef, ModuleRef, UserFunction, classify, module_constant
from .source import FunctionSource
from .values import (NONE, EnumerateValue, MethodRef, NoneValue, RangeValue, ReversedValue,
                     TupleValue, ZipValue)

_UNSUPPORTED_STATEMENTS = {
    ast.Try: "try/except", ast.With: "with", ast.AsyncWith: "async with", ast.Global: "global",
    ast.Nonlocal: "nonlocal", ast.ClassDef: "class definitions",
    ast.AsyncFunctionDef: "nested async def", ast.Delete: "del", ast.Raise: "raise",
    ast.Import: "import", ast.ImportFrom: "import", ast.AsyncFor: "async for",
}
_UNSUPPORTED_EXPRESSIONS = {
    ast.Lambda: "lambda", ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await",
    ast.ListComp: "list comprehensions", ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions",
    ast.Dict: "dict literals", ast.Set: "set literals", ast.JoinedStr: "f-strings",
    ast.NamedExpr: "the walrus operator", ast.Starred: "star-arguments",
}
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.MatMult: "matmul"}
_CHEAP_PRIMS = {"lt", "le", "gt", "ge", "eq", "ne", "not", "and", "or", "add", "sub", "mul", "neg",
                "alias"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}


class _Retry(Exception):
    """A loop-carried variable's type widened: translate the function again."""


class Translator:
    def __init__(self, pyfunc, arg_types, namer=None, hints=None):
        self.src = FunctionSource(pyfunc)
        lower_jumps(self.src.node)
        # flag -> its constant value while known at compile time (set outside any branch, as
        # after `if b is None: return x`), so that the guards it controls fold away
        self.jump_flags = getattr(self.src.node, "jump_flags", set())
        self.known_flags = {}
        self.pyfunc = pyfunc
        self.arg_types = arg_types
        self.namer = namer or Namer()
        self.hints = hints if hints is not None else {}
        self.depth = 0
        self.base_depth = 0  # the depth of the call site when inlined
        self.env = {}
        self.hidden_params = []   # (Var, numpy array) for global/closure arrays
        self.scope_globals = dict(pyfunc.__globals__)
        if pyfunc.__closure__:
            for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
                try:
                    self.scope_globals[name] = cell.cell_contents
                except ValueError:
                    pass
        self.loc = None

    # ------------------------------------------------------------------ errors
    def error(self, message, node=None, cls=AdCompileError):
        loc = self.src.location(node) if node is not None else self.loc
        return located(cls, message, loc)

    # ------------------------------------------------------------------ entry
    def translate(self):
        node = self.src.node
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error("star-args, keyword-only and positional-only parameters are not supported",
                             node, UnsupportedSyntaxError)
        names = [a.arg for a in args.args]
        if len(names) != len(self.arg_types):
            raise AssertionError("signature length mismatch")
        params = []
        for name, type_ in zip(names, self.arg_types):
            self.namer.reserve(name)
            if isinstance(type_, NoneValue) or type_ is None or type_.dtype == "none":
                self.env[name] = NONE
                params.append(Var(name, Type("none")))
                continue
            var = Var(name, type_)
            params.append(var)
            self.env[name] = var
        self.block = []
        self.builder = Builder(self.namer, self.block)
        self.results = None
        self.statements(node.body)
        if self.results is None:
            raise self.error("the function must end with a return statement", node)
        if self.results[1] is None:
            raise self.error("the function must return a value", node, UnsupportedSyntaxError)
        params += [var for var, _ in self.hidden_params]
        fn = Function(node.name, params, self.block, self.results[0], self.results[1], self.src.filename)
        fn.hidden_values = [value for _, value in self.hidden_params]
        return fn

    # ------------------------------------------------------------------ statements
    def statements(self, body):
        for stmt in body:
            if self.results is not None and self.depth == self.base_depth:
                raise self.error("code after the final return statement is never run", stmt,
                                 UnsupportedSyntaxError)
            self.statement(stmt)

    def in_block(self, block, body):
        saved_block, saved_builder = self.block, self.builder
        self.block = block
        self.builder = Builder(self.namer, block, self.loc)
        try:
            self.statements(body)
        finally:
            self.block, self.builder = saved_block, saved_builder
            self.builder.loc = self.loc

    def statement(self, node):
        self.loc = self.src.location(node)
        self.builder.loc = self.loc
        for kind, what in _UNSUPPORTED_STATEMENTS.items():
            if isinstance(node, kind):
                raise self.error(f"{what} is not supported by adcompile", node, UnsupportedSyntaxError)
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"{type(node).__name__} statements are not supported", node, UnsupportedSyntaxError)
        method(node)

    def stmt_Expr(self, node):
        if isinstance(node.value, ast.Constant):
            return  # docstring or bare constant
        value = self.expr(node.value)
        if not isinstance(value, NoneValue):
            raise self.error("an expression statement whose value is discarded has no effect here",
                             node, UnsupportedSyntaxError)

    def stmt_Pass(self, node):
        pass

    def stmt_Assert(self, node):
        pass  # assertions are not checked in compiled code

    def stmt_Return(self, node):
        if self.depth > self.base_depth:
            raise self.error("return inside a loop or branch is not supported yet; assign to a "
                             "variable and return it at the end", node, UnsupportedSyntaxError)
        value = NONE if node.value is None else self.expr(node.value)
        if isinstance(value, NoneValue):
            self.results = ([], None)  # returns None: fine for a helper, not for the function
            return
        if isinstance(value, TupleValue):
            atoms = [self.as_atom(v, node) for v in value.items]
            self.results = (atoms, True)
        else:
            self.results = ([self.as_atom(value, node)], False)

    def stmt_FunctionDef(self, node):
        from .inline import LocalFunction
        if node.decorator_list:
            raise self.error("decorated nested def is not supported", node, UnsupportedSyntaxError)
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error("star-args, keyword-only and positional-only parameters are not supported",
                             node, UnsupportedSyntaxError)
        defaults = [self.expr(d) for d in args.defaults]  # evaluated at def time, as in Python
        self.env[node.name] = LocalFunction(node, self, defaults)

    def stmt_Assign(self, node):
        value = self.expr(node.value)
        for target in node.targets:
            self.assign(target, value, node)

    def stmt_AnnAssign(self, node):
        if node.value is not None:
            self.assign(node.target, self.expr(node.value), node)

    def stmt_AugAssign(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.error("unsupported augmented assignment operator", node, UnsupportedSyntaxError)
        if isinstance(node.target, ast.Name):
            current = self.lookup(node.target.id, node.target)
            value = self.binop(op, current, self.expr(node.value), node)
            self.assign(node.target, value, node)
        elif isinstance(node.target, ast.Subscript):
            array = self.expr(node.target.value)
            items = self.index_items(array, node.target.slice)
            if any(item[0] == "mask" for item in items):  # x[mask] += v: x = where(mask, x + v, x)
                operand = self.as_atom(self.expr(node.value), node)
                self.check_mask(array, items, operand.type.ndim == 0, node)
                value = self.as_atom(self.binop(op, array, operand, node), node)
                self.block.append(SetItem(array, *self.masked_update(array, items[0][1], value), self.loc))
                return
            current = self.getitem(array, items, node)
            value = self.binop(op, current, self.expr(node.value), node)
            self.setitem(array, items, value, node)
        else:
            raise self.error("unsupported augmented assignment target", node, UnsupportedSyntaxError)

    def stmt_If(self, node):
        cond = self.condition(node.test)
        if isinstance(cond, Const):  # decided at compile time (e.g. `if bias is not None`)
            self.statements(node.body if cond.value else node.orelse)
            return
        body, orelse = [], []
        self.depth += 1
        self.in_block(body, node.body)
        self.in_block(orelse, node.orelse)
        self.depth -= 1
        self.loc = self.src.location(node)
        self.block.append(If(cond, body, orelse, self.src.location(node)))

    def stmt_While(self, node):
        if node.orelse:
            raise self.error("while ... else is not supported", node, UnsupportedSyntaxError)
        cond_body, body = [], []
        self.depth += 1
        saved_block, saved_builder = self.block, self.builder
        self.block, self.builder = cond_body, Builder(self.namer, cond_body, self.src.location(node))
        cond = self.condition(node.test)
        self.block, self.builder = saved_block, saved_builder
        self.in_block(body, node.body)
        self.depth -= 1
        self.block.append(While(cond_body, cond, body, self.src.location(node)))

    def stmt_For(self, node):
        if node.orelse:
            raise self.error("for ... else is not supported", node, UnsupportedSyntaxError)
        iterable = self.expr(node.iter)
        loc = self.src.location(node)
        prologue_targets = []
        if isinstance(iterable, ReversedValue):
            inner = iterable.inner
            if not isinstance(inner, RangeValue):
                raise self.error("reversed() is supported on range() only", node.iter, UnsupportedSyntaxError)
            b = self.builder
            n = b.call("range_len", inner.start, inner.stop, inner.step)
            last = b.emit("add", [inner.start, b.emit("mul", [b.emit("sub", [n, const(1)]), inner.step])])
            iterable = RangeValue(last, b.emit("sub", [inner.start, inner.step]), b.emit("neg", [inner.step]))
        if isinstance(iterable, RangeValue):
            index_target = node.target
            start, stop, step = iterable.start, iterable.stop, iterable.step
        else:
            index_target = None
            sequences, enumerate_ = self.loop_sequences(iterable, node)
            start, stop, step = const(0), self.loop_length(sequences, node), const(1)
            prologue_targets = (sequences, enumerate_)
        if isinstance(index_target, ast.Name):
            index = self.bind_loop_index(index_target.id)
        else:
            index = Var(self.namer.fresh("_i"), I8)
        stop_flags = getattr(node, "stop_flags", None)
        if stop_flags:
            counter, first = self.counted_loop_start(index, start, stop, step, loc)
        body = []
        self.depth += 1
        saved_block, saved_builder = self.block, self.builder
        self.block, self.builder = body, Builder(self.namer, body, loc)
        if stop_flags:
            first()
        if prologue_targets:
            sequences, enumerate_ = prologue_targets
            items = [self.getitem(seq, [("int", index)], node) for seq in sequences]
            value = items[0] if len(items) == 1 and not isinstance(iterable, ZipValue) else TupleValue(items)
            if enumerate_:
                value = TupleValue([index, value])
            self.assign(node.target, value, node)
        elif index_target is not None and not isinstance(index_target, ast.Name):
            raise self.error("the loop target of range() must be a name", node.target, UnsupportedSyntaxError)
        self.block, self.builder = saved_block, saved_builder
        self.in_block(body, node.body)
        self.depth -= 1
        if stop_flags:
            self.counted_loop_end(counter, stop_flags, body, node, loc)
        else:
            self.block.append(For(index, start, stop, step, body, loc))

    def counted_loop_start(self, index, start, stop, step, loc):
        """A ``for`` loop that may break or return runs as a counted ``while`` loop:
        ``k = 0; while k < n and not <flags>: i = start + k*step; body; k += 1``."""
        b = self.builder
        n = b.call("range_len", start, stop, step)
        n.is_temp = False
        n.name = self.namer.fresh("n_" + index.name.lstrip("_"))
        counter = Var(self.namer.fresh("_k"), I8)
        self.block.append(Assign(counter, "alias", [const(0)], loc=loc))

        def first():  # the loop index of this iteration, at the top of the body
            value = counter
            if not (isinstance(step, Const) and step.value == 1):
                value = self.builder.emit("mul", [value, step])
            if not (isinstance(start, Const) and start.value == 0):
                value = self.builder.emit("add", [start, value])
            self.block.append(Assign(index, "alias", [value], loc=loc))
        return (counter, n), first

    def counted_loop_end(self, counter, stop_flags, body, node, loc):
        counter, n = counter
        body.append(Assign(counter, "add", [counter, const(1)], loc=loc))
        cond_body = []
        cb = Builder(self.namer, cond_body, loc)
        cond = cb.emit("lt", [counter, n])
        for flag in stop_flags:
            cond = cb.emit("and", [cond, cb.emit("not", [self.lookup(flag, node)])])
        self.block.append(While(cond_body, cond, body, loc))

    def loop_sequences(self, iterable, node):
        enumerate_ = isinstance(iterable, EnumerateValue)
        if enumerate_:
            iterable = iterable.inner
        sequences = iterable.inners if isinstance(iterable, ZipValue) else [iterable]
        for seq in sequences:
            if not (isinstance(seq, Var) and seq.type.ndim > 0):
                raise self.error("for loops run over range(...), arrays, enumerate() and zip() of arrays",
                                 node.iter, UnsupportedSyntaxError)
        return sequences, enumerate_

    def loop_length(self, sequences, node):
        lengths = [self.builder.call("dim", seq, axis=0) for seq in sequences]
        n = lengths[0]
        for other in lengths[1:]:
            n = self.builder.call("minimum", n, other)
        return n

    def bind_loop_index(self, name):
        current = self.env.get(name)
        if isinstance(current, Var) and current.type == I8:
            return current
        var = Var(self.namer.fresh(name), I8)
        self.env[name] = var
        return var

    def stmt_Break(self, node):
        raise self.error("break is not supported yet", node, UnsupportedSyntaxError)

    def stmt_Continue(self, node):
        raise self.error("continue is not supported yet", node, UnsupportedSyntaxError)

    # ------------------------------------------------------------------ assignment
    def assign(self, target, value, node):
        if isinstance(target, ast.Name):
            self.bind(target.id, value, node)
        elif isinstance(target, (ast.Tuple, ast.List)):
            starred = [k for k, t in enumerate(target.elts) if isinstance(t, ast.Starred)]
            if len(starred) == 1 and isinstance(value, TupleValue):  # n, *rest = x.shape
                k, n_after = starred[0], len(target.elts) - starred[0] - 1
                if len(value.items) < len(target.elts) - 1:
                    raise self.error(f"not enough values to unpack into {len(target.elts)} names", node,
                                     TypeMismatchError)
                items, stop = list(value.items), len(value.items) - n_after
                value = TupleValue(items[:k] + [TupleValue(items[k:stop])] + items[stop:])
                target = ast.Tuple(target.elts[:k] + [target.elts[k].value] + target.elts[k + 1:], ast.Store())
            if isinstance(value, Var) and value.type.ndim > 0 and not starred:
                # a, b = p: the rows of p; the reshape to length 2 fails at run time, as
                # unpacking does, if p has another length
                n = len(target.elts)
                rest = [self.builder.call("dim", value, axis=k) for k in range(1, value.type.ndim)]
                rows = self.builder.call("reshape", value, const(n), *rest)
                value = TupleValue([self.getitem(rows, [("int", const(k))], node) for k in range(n)])
            if not isinstance(value, TupleValue) or len(value.items) != len(target.elts):
                raise self.error("cannot unpack this value into "
                                 f"{len(target.elts)} names", node, TypeMismatchError)
            targets = {self.env.get(t.id) for t in target.elts if isinstance(t, ast.Name)}
            items = [self.builder.emit("alias", [v]) if isinstance(v, Var) and v in targets else v
                     for v in value.items]
            for t, v in zip(target.elts, items):
                self.assign(t, v, node)
        elif isinstance(target, ast.Subscript):
            array = self.expr(target.value)
            items = self.index_items(array, target.slice)
            self.setitem(array, items, value, node)
        elif isinstance(target, ast.Attribute):
            raise self.error("assigning to attributes is not supported", target, UnsupportedSyntaxError)
        else:
            raise self.error("unsupported assignment target", target, UnsupportedSyntaxError)

    def bind(self, name, value, node):
        if name in self.jump_flags:
            self.known_flags.pop(name, None)
            if isinstance(value, Const) and self.depth == self.base_depth:
                self.known_flags[name] = value
        if isinstance(value, TupleValue) and self.depth > self.base_depth:
            self.bind_tuple(name, value, node)
            return
        if not isinstance(value, (Var, Const)):
            self.env[name] = value  # a compile-time value (tuple, None, range ...)
            return
        current = self.env.get(name)
        if self.depth > self.base_depth and isinstance(current, Var) and current.type.dtype != "none":
            target = current
            new_type = value.type
            if new_type != target.type:
                widened = self.widen(target.type, new_type, node)
                if widened != target.type:
                    self.hints[target.name] = widened
                    raise _Retry()
        else:
            base = name.replace("#", "_")
            var_name = self.namer.fresh(base)
            target = Var(var_name, self.hints.get(var_name, value.type))
            if target.type != value.type:
                self.widen(target.type, value.type, node)
        self.env[name] = target
        last = self.block[-1] if self.block else None
        if (isinstance(value, Var) and value.is_temp and isinstance(last, Assign) and last.target is value
                and target.type == value.type):
            last.target = target
        else:
            self.block.append(Assign(target, "alias", [value], loc=self.loc))

    def bind_tuple(self, name, value, node):
        """A tuple assigned inside a loop or branch is held in one variable per item, so that
        which assignment ran is decided at run time."""
        current = self.env.get(name)
        runtime = isinstance(current, TupleValue) and getattr(current, "runtime", False)
        if runtime and len(current.items) != len(value.items):
            raise self.error(f"'{name}' is assigned tuples of different lengths", node, TypeMismatchError)
        if current is not None and not runtime and not isinstance(current, NoneValue):
            raise self.error(f"'{name}' is given a tuple inside a loop or branch but had another value "
                             "before it; unpack the tuple into names (a, b = ...)", node, UnsupportedSyntaxError)
        items = []
        for k, item in enumerate(value.items):
            key = f"{name}#{k}"
            if not runtime:
                self.env.pop(key, None)
            self.bind(key, self.as_atom(item, node), node)
            items.append(self.env[key])
        result = TupleValue(items)
        result.runtime = True
        self.env[name] = result

    def widen(self, old, new, node):
        if old.ndim != new.ndim:
            raise self.error(f"a variable changes from {_kind(old)} to {_kind(new)}; numba needs one "
                             "type per variable (use a new name)", node, TypeMismatchError)
        if old.dtype == new.dtype:
            return old
        order = ["b1", "i8", "f4", "f8"]
        return old if order.index(old.dtype) >= order.index(new.dtype) else new

    def setitem(self, array, items, value, node):
        if not (isinstance(array, Var) and array.type.ndim > 0):
            raise self.error("only arrays support item assignment", node, TypeMismatchError)
        value = self.as_atom(value, node)
        if any(item[0] == "mask" for item in items):
            self.check_mask(array, items, value.type.ndim == 0, node)
            value, items = self.masked_update(array, items[0][1], value)
        self.block.append(SetItem(array, value, items, self.loc))

    def check_mask(self, array, items, value_ok, node):
        if len(items) != 1 or items[0][1].type.ndim != array.type.ndim or not value_ok:
            raise self.error("boolean-mask assignment is supported only as x[mask] = scalar (or "
                             "x[mask] op= scalar) with a mask of x's shape; use np.where", node,
                             UnsupportedSyntaxError)

    def masked_update(self, array, mask, value):
        """``x[mask] = v`` as the whole-array update ``x[...] = np.where(mask, v, x)``: it has a
        fixed shape and a derivative. Returns the SetItem's value and items."""
        value = self.builder.emit("where", [mask, value, array])
        if value.type != array.type:
            value = self.builder.emit("as_dtype", [value], dtype=array.type.dtype)
        return value, [("slice", None, None, None)] * array.type.ndim

    def reject_mask(self, items, node):
        if any(item[0] == "mask" for item in items):
            raise self.error("boolean-mask indexing (x[mask]) gives an array whose length is known only "
                             "at run time and is not supported; use np.where(mask, x, 0) or "
                             "x[mask] = scalar", node, UnsupportedSyntaxError)

    # ------------------------------------------------------------------ expressions
    def expr(self, node):
        for kind, what in _UNSUPPORTED_EXPRESSIONS.items():
            if isinstance(node, kind):
                raise self.error(f"{what} are not supported by adcompile" if what.endswith("s")
                                 else f"{what} is not supported by adcompile", node, UnsupportedSyntaxError)
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"{type(node).__name__} expressions are not supported", node, UnsupportedSyntaxError)
        return method(node)

    def as_atom(self, value, node):
        if isinstance(value, (Var, Const)):
            return value
        if isinstance(value, TupleValue):
            raise self.error("a tuple cannot be used as a number or array here", node, TypeMismatchError)
        raise self.error(f"this value ({type(value).__name__}) cannot be used as a number or array",
                         node, TypeMismatchError)

    def expr_Constant(self, node):
        value = node.value
        if value is None:
            return NONE
        if isinstance(value, (bool, int, float)):
            return const(value)
        raise self.error(f"constants of type {type(value).__name__} are not supported", node, TypeMismatchError)

    def expr_Name(self, node):
        return self.lookup(node.id, node)

    def lookup(self, name, node):
        if name in self.known_flags and self.depth == self.base_depth:
            return self.known_flags[name]
        if name in self.env:
            return self.env[name]
        if name in self.scope_globals:
            return self.global_value(self.scope_globals[name], name, node)
        import builtins
        if hasattr(builtins, name):
            known = classify(getattr(builtins, name))
            if known is not None:
                return known
            raise self.error(f"the builtin '{name}' is not supported", node, UnsupportedSyntaxError)
        raise self.error(f"name '{name}' is not defined", node, AdCompileError)

    def global_value(self, value, name, node):
        known = classify(value)
        if known is not None:
            return known
        if isinstance(value, (bool, int, float, np.floating, np.integer)):
            if isinstance(value, (np.floating,)):
                return const(float(value))
            return const(value if isinstance(value, bool) else (int(value) if isinstance(value, (int, np.integer)) else value))
        if value is None:
            return NONE
        if isinstance(value, np.ndarray):
            return self.hidden_array(value, name, node)
        if isinstance(value, tuple):
            return TupleValue([self.global_value(v, name, node) for v in value])
        from .extensions import classify_extension
        extension = classify_extension(value)
        if extension is not None:
            return extension
        if callable(value) and hasattr(value, "__code__"):
            return UserFunction(value)
        raise self.error(f"'{name}' refers to a {type(value).__name__}, which compiled code cannot use",
                         node, TypeMismatchError)

    def hidden_array(self, value, name, node):
        for var, existing in self.hidden_params:
            if existing is value:
                return var
        type_ = type_of_value(value)
        if type_ is None:
            raise self.error(f"global array '{name}' has unsupported dtype {value.dtype}", node, TypeMismatchError)
        var = Var(self.namer.fresh(name), type_)
        self.hidden_params.append((var, value))
        return var

    def expr_Attribute(self, node):
        base = self.expr(node.value)
        attr = node.attr
        if isinstance(base, ModuleRef):
            constant = module_constant(base.module, attr)
            if constant is not None:
                return const(constant)
            if attr == "newaxis":
                return NONE
            if not hasattr(base.module, attr):
                raise self.error(f"module '{base.module.__name__}' has no attribute '{attr}'", node)
            value = getattr(base.module, attr)
            known = classify(value)
            if known is None:
                from .extensions import classify_extension
                extension = classify_extension(value)
                if extension is not None:
                    return extension
                if callable(value) and hasattr(value, "__code__") and not _is_library(base.module):
                    return UserFunction(value)  # a helper of the user's, from another module
                if callable(value):
                    raise self.error(f"'{base.module.__name__}.{attr}' is not supported by adcompile",
                                     node, calls.UnsupportedFunctionError)
                return self.global_value(value, attr, node)
            return known
        if isinstance(base, Var):
            return calls.attribute(self, base, attr, node)
        if isinstance(base, UserFunction):
            raise self.error("attributes of functions are not supported", node, UnsupportedSyntaxError)
        from .extensions import attribute_of_extension
        result = attribute_of_extension(self, base, attr, node)
        if result is not None:
            return result
        raise self.error(f"attribute '{attr}' is not supported here", node, UnsupportedSyntaxError)

    def expr_Tuple(self, node):
        return TupleValue([self.expr(e) for e in node.elts])

    expr_List = expr_Tuple

    def expr_BinOp(self, node):
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise self.error("unsupported operator", node, UnsupportedSyntaxError)
        return self.binop(op, self.expr(node.left), self.expr(node.right), node)

    def binop(self, op, left, right, node):
        if isinstance(left, TupleValue) and isinstance(right, TupleValue) and op == "add":
            return TupleValue(left.items + right.items)
        left, right = self.as_atom(left, node), self.as_atom(right, node)
        if op == "matmul":
            return calls.matmul(self, left, right, node)
        if op == "pow" and isinstance(right, Const) and right.value == 2:
            return self.builder.emit("mul", [left, left])
        if op in ("floordiv", "mod") and left.type.is_float and op == "floordiv":
            return self.builder.call("floor", self.builder.emit("div", [left, right]))
        if op == "div" and isinstance(left, Const) and isinstance(right, Const):
            return const(left.value / right.value)
        return self.emit(op, [left, right], node)

    def emit(self, prim, args, node, **params):
        try:
            return self.builder.emit(prim, args, **params)
        except TypeMismatchError as exc:
            raise self.error(str(exc), node, TypeMismatchError) from None

    def expr_UnaryOp(self, node):
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.UAdd):
            return operand
        if isinstance(node.op, ast.Not):
            operand = self.as_atom(operand, node)
            if isinstance(operand, Const):
                return const(not operand.value)
            return self.emit("not", [operand], node)
        if isinstance(node.op, ast.USub):
            operand = self.as_atom(operand, node)
            if isinstance(operand, Const):
                return const(-operand.value, operand.type)
            return self.emit("neg", [operand], node)
        raise self.error("unsupported unary operator", node, UnsupportedSyntaxError)

    def expr_BoolOp(self, node):
        """``a and b`` / ``a or b``; ``b`` is evaluated only when needed if it does more than
        compare and combine scalars (it may index out of bounds: ``i < n and x[i] > 0``)."""
        prim = "and" if isinstance(node.op, ast.And) else "or"
        result = self.condition(node.values[0])
        for value_node in node.values[1:]:
            if isinstance(result, Const) and bool(result.value) != (prim == "and"):
                return result  # decided at compile time; the rest is not evaluated, as in Python
            block = []
            saved_block, saved_builder = self.block, self.builder
            self.block, self.builder = block, Builder(self.namer, block, self.loc)
            try:
                value = self.condition(value_node)
            finally:
                self.block, self.builder = saved_block, saved_builder
            if isinstance(result, Const):
                self.block += block
                result = value if result.value == (prim == "and") else result
            elif isinstance(value, Const):
                if bool(value.value) != (prim == "and"):  # `r and False`, `r or True`
                    result = value
            elif all(isinstance(s, Assign) and s.prim in _CHEAP_PRIMS for s in block):
                self.block += block
                result = self.emit(prim, [result, value], node)
            else:
                result = self.short_circuit(prim, result, value, block)
        return result

    def short_circuit(self, prim, first, second, block):
        var = Var(self.namer.fresh("_cond"), B1)
        self.block.append(Assign(var, "alias", [first], loc=self.loc))
        block.append(Assign(var, "alias", [second], loc=self.loc))
        test = var if prim == "and" else self.builder.emit("not", [var])
        self.block.append(If(test, block, [], self.loc))
        return var

    def expr_Compare(self, node):
        left = self.expr(node.left)
        result = None
        for op, right_node in zip(node.ops, node.comparators):
            right = self.expr(right_node)
            if isinstance(op, (ast.Is, ast.IsNot)):
                is_none = isinstance(left, NoneValue) == isinstance(right, NoneValue) if \
                    isinstance(right, NoneValue) or isinstance(left, NoneValue) else None
                if is_none is None:
                    raise self.error("'is' is supported only to compare with None", node, UnsupportedSyntaxError)
                part = const(is_none if isinstance(op, ast.Is) else not is_none)
            else:
                prim = _CMPOPS.get(type(op))
                if prim is None:
                    raise self.error("unsupported comparison", node, UnsupportedSyntaxError)
                part = self.emit(prim, [self.as_atom(left, node), self.as_atom(right, node)], node)
            result = part if result is None else self.emit("and", [result, part], node)
            left = right
        return result

    def condition(self, node):
        value = self.expr(node)
        if isinstance(value, NoneValue):
            return const(False)
        value = self.as_atom(value, node)
        if value.type.ndim > 0:
            raise self.error("the truth value of an array is ambiguous; use np.any/np.all or a reduction",
                             node, TypeMismatchError)
        if isinstance(value, Const):
            return const(bool(value.value))
        return value

    def expr_IfExp(self, node):
        cond = self.condition(node.test)
        if isinstance(cond, Const):
            return self.expr(node.body if cond.value else node.orelse)
        body, orelse = [], []
        results = []
        self.depth += 1
        for block, branch in ((body, node.body), (orelse, node.orelse)):
            saved_block, saved_builder = self.block, self.builder
            self.block, self.builder = block, Builder(self.namer, block, self.loc)
            results.append(self.as_atom(self.expr(branch), branch))
            self.block, self.builder = saved_block, saved_builder
        self.depth -= 1
        a, b = results
        if a.type.ndim != b.type.ndim:
            raise self.error("both branches of a conditional expression must be scalars or arrays of "
                             "the same ndim", node, TypeMismatchError)
        dtype = self.widen(a.type, b.type, node).dtype if a.type.dtype != b.type.dtype else a.type.dtype
        var = Var(self.namer.fresh("_select"), Type(dtype, a.type.ndim))
        body.append(Assign(var, "alias", [a], loc=self.loc))
        orelse.append(Assign(var, "alias", [b], loc=self.loc))
        self.block.append(If(cond, body, orelse, self.loc))
        return var

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        if isinstance(base, TupleValue):
            index = self.expr(node.slice)
            if isinstance(index, Const) and isinstance(index.value, int):
                try:
                    return base.items[index.value]
                except IndexError:
                    raise self.error("tuple index out of range", node, TypeMismatchError) from None
            if isinstance(node.slice, ast.Slice):
                parts = [None if p is None else self.expr(p) for p in (node.slice.lower, node.slice.upper, node.slice.step)]
                if all(p is None or isinstance(p, Const) for p in parts):
                    return TupleValue(base.items[slice(*[None if p is None else p.value for p in parts])])
            raise self.error("tuples can only be indexed by constants", node, TypeMismatchError)
        items = self.index_items(base, node.slice)
        return self.getitem(base, items, node)

    def index_items(self, base, slice_node):
        if not (isinstance(base, Var) and base.type.ndim > 0):
            raise self.error("only arrays and tuples can be indexed", slice_node, TypeMismatchError)
        parts = slice_node.elts if isinstance(slice_node, ast.Tuple) else [slice_node]
        items = []
        for part in parts:
            if isinstance(part, ast.Constant) and part.value is Ellipsis:
                if any(item == ("ellipsis",) for item in items):
                    raise self.error("an index can only have a single ellipsis ('...')", part, TypeMismatchError)
                items.append(("ellipsis",))
                continue
            if isinstance(part, ast.Slice):
                bounds = []
                for p in (part.lower, part.upper, part.step):
                    if p is None:
                        bounds.append(None)
                    else:
                        value = self.as_atom(self.expr(p), p)
                        if value.type != I8 or value.type.ndim:
                            raise self.error("slice bounds must be integers", p, TypeMismatchError)
                        bounds.append(value)
                items.append(("slice", *bounds))
                continue
            value = self.expr(part)
            if isinstance(value, NoneValue):
                items.append(("none",))
            elif isinstance(value, (Var, Const)) and value.type.dtype == "i8":
                items.append(("array", value) if value.type.ndim else ("int", value))
            elif isinstance(value, (Var, Const)) and value.type.dtype == "b1" and value.type.ndim:
                items.append(("mask", value))  # only `x[mask] = scalar` (see masked_update)
            else:
                raise self.error("array indices must be integers, slices, None or integer arrays", part,
                                 TypeMismatchError)
        if ("ellipsis",) in items:  # x[..., 0]: as many full slices as the other items leave
            k = items.index(("ellipsis",))
            consumed = sum(1 for item in items if item[0] in ("int", "slice", "array", "mask"))
            items[k:k + 1] = [("slice", None, None, None)] * max(base.type.ndim - consumed, 0)
        return items

    def getitem(self, array, items, node):
        self.reject_mask(items, node)
        try:
            params, index_args = index_params(array.type, items)
        except TypeMismatchError as exc:
            raise self.error(str(exc), node, TypeMismatchError) from None
        return self.builder.emit("getitem", [array] + index_args, **params)

    def expr_Call(self, node):
        func = self.expr(node.func)
        calls.check_supported(self, func, node, [kw.arg for kw in node.keywords if kw.arg is not None])
        args = [self.expr(a) for a in node.args]
        kwargs = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise self.error("**kwargs calls are not supported", node, UnsupportedSyntaxError)
            kwargs[kw.arg] = self.expr(kw.value)
        return calls.call(self, func, args, kwargs, node)


def _is_library(module):
    return module.__name__.split(".")[0] in ("numpy", "math", "scipy", "numba", "builtins")


def _kind(type_):
    return "a scalar" if type_.ndim == 0 else f"a {type_.ndim}-d array"


def translate(pyfunc, arg_types, namer=None):
    """The typed IR ``Function`` of ``pyfunc`` for arguments of ``arg_types``."""
    hints = {}
    for _ in range(8):
        try:
            return Translator(pyfunc, arg_types, namer=Namer() if namer is None else namer, hints=hints).translate()
        except _Retry:
            continue
    raise AdCompileError("type inference did not converge")


__all__ = ["translate", "Translator", "B1", "F8", "DTypeRef", "FuncRef", "MethodRef", "UserFunction"]
