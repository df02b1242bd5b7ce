"""Statements of the user's function -> IR (a mixin of ``parse.Translator``).

Assignments, augmented assignments, ``if``, ``for`` (over ranges, arrays, ``enumerate``,
``zip``), ``while``, ``return``, nested ``def`` and ``assert`` (a run-time check); jumps were
already lowered to flags by ``early_exits.py``.
"""
import ast
import sys

from ...errors import TypeMismatchError, UnsupportedSyntaxError
from ...ir.builder import Builder, const
from ...ir.nodes import Assign, Const, For, If, SetItem, Var, While
from ...ir.types import B1, I8
from ..checkpointed import CheckpointedValue, checkpointed_for
from .inline import LocalFunction
from .tables import _BINOPS, _UNSUPPORTED_STATEMENTS
from .targets import subscript_target
from .unroll import is_static_sequence, unroll_for
from ..values import flat_items, is_flat_tuple, nested_structure
from ..values import (
    NONE,
    EnumerateValue,
    NoneValue,
    RangeValue,
    ReversedValue,
    TupleValue,
    ZipValue,
)
from ...ir.indexing import FULL_SLICE

_NUMPY_DTYPES = {"f8": "float64", "f4": "float32", "i8": "int64", "b1": "bool"}


class StatementTranslation:
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
        """``assert test, message``: a run-time check raising ``AssertionError(message)`` when
        ``test`` is false, as Python does (and, as Python does under ``python -O``, nothing
        when assertions are off). A message that is not a string literal is not evaluated: its
        source text is the message."""
        if sys.flags.optimize:
            return
        test = self.condition(node.test)
        if isinstance(test, Const) and test.value:
            return
        message = None
        if node.msg is not None:
            literal = isinstance(node.msg, ast.Constant) and isinstance(node.msg.value, str)
            message = node.msg.value if literal else ast.unparse(node.msg)
        self.block.append(Assign(Var(self.namer.fresh("_asserted"), B1), "check_assertion", [test],
                                 {"message": message}, loc=self.loc))

    def stmt_Return(self, node):
        if self.depth > self.base_depth:
            raise self.error("return inside a loop or branch is not supported yet; assign to a "
                             "variable and return it at the end", node, UnsupportedSyntaxError)
        value = NONE if node.value is None else self.expr(node.value)
        if isinstance(value, NoneValue):
            self.results = ([], None)  # returns None: fine for a helper, not for the function
            return
        if isinstance(value, TupleValue):
            structure = nested_structure(value)
            atoms = [self.as_atom(v, node) for v in flat_items(value)]
            self.results = (atoms, True)
            if not is_flat_tuple(structure):  # (output, (h_n, c_n)), a list, a dict
                self.result_structure = structure
        else:
            self.results = ([self.as_atom(value, node)], False)

    def stmt_FunctionDef(self, node):
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
        if len(node.targets) > 1 and isinstance(value, Var) and value.is_temp:
            value.is_temp = False  # a = b = expr: every target reads it, so it stays a variable
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
            if isinstance(current, Var) and current.type.ndim > 0:
                self.update_in_place(current, value, node)
            else:
                self.assign(node.target, value, node)  # a number is a value: `s += 1` rebinds s
        elif isinstance(node.target, ast.Subscript):
            array, items = subscript_target(self, node.target)
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

    def update_in_place(self, array, value, node):
        """``a op= b`` on an array writes into ``a``'s memory, as numpy does (every alias and
        view of ``a`` sees the change): the whole-array write ``a[...] = a op b``, with numpy's
        rules: the result must not need a larger shape, and is cast back to ``a``'s dtype only
        within a kind (float64 into float32, not float into an integer array)."""
        value = self.as_atom(value, node)
        if value.type.ndim > array.type.ndim:
            raise self.error(f"this in-place operation would need a {value.type.ndim}-d result, which "
                             f"cannot be written into the {array.type.ndim}-d array (numpy raises "
                             "'non-broadcastable output operand'); write it as a = a op b", node,
                             TypeMismatchError)
        if value.type.dtype != array.type.dtype:
            if not array.type.is_float:
                raise self.error(f"this in-place operation gives {_NUMPY_DTYPES[value.type.dtype]} values, "
                                 f"which cannot be written into an array of {_NUMPY_DTYPES[array.type.dtype]} (numpy "
                                 "raises: cannot cast with casting rule 'same_kind'); write it as "
                                 "a = a op b", node, TypeMismatchError)
            value = self.builder.emit("as_dtype", [value], dtype=array.type.dtype)
        self.block.append(SetItem(array, value, [FULL_SLICE] * array.type.ndim, self.loc))

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
        if isinstance(iterable, CheckpointedValue):  # reverse mode recomputes it from snapshots
            return checkpointed_for(self, node, iterable, self.for_loop)
        return self.for_loop(node, iterable)

    def for_loop(self, node, iterable):
        if is_static_sequence(iterable):  # over a tuple or modules: unrolled (unroll.py)
            return unroll_for(self, node, iterable)
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
            start, stop, step = (self.loop_entry_value(a, node) for a in (iterable.start, iterable.stop, iterable.step))
        else:
            index_target = None
            sequences, enumerate_ = self.loop_sequences(iterable, node)
            sequences = [self.loop_entry_value(seq, node) for seq in sequences]
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

    def loop_entry_value(self, atom, node):
        """Python evaluates a for loop's ``range`` arguments and iterable once, on entry: a
        name the loop body rebinds (``for e in x: ... x = 2.0 * x``) is read through a copy
        of its value at entry (for an array, the original array object)."""
        if not isinstance(atom, Var):
            return atom
        stored = {n.id for stmt in node.body for n in ast.walk(stmt)
                  if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        if not any(self.env.get(name) is atom for name in stored):
            return atom
        entry = Var(self.namer.fresh(atom.name.lstrip("_") + "_entry"), atom.type)
        self.block.append(Assign(entry, "alias", [atom], loc=self.src.location(node)))
        return entry

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

