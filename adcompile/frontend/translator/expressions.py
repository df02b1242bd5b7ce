"""Expressions of the user's function -> IR atoms or compile-time values (a mixin of
``parse.Translator``): names and globals, attributes, operators, comparisons, conditional
expressions, subscripts and calls (dispatched to ``calls.py``).
"""
import ast
import builtins

import numpy as np

from ...errors import AdCompileError, TypeMismatchError, UnsupportedSyntaxError
from ...ir.builder import Builder, const
from ...ir.nodes import Assign, Const, If, Var
from ...ir.primitives import Kind, has_kind
from ...ir.types import B1, I8, Type, type_of_value
from .. import calls
from ..extensions import attribute_of_extension, classify_extension
from ..numpy.gathers import gather_of_inner_axis, masked_read, sequence_index_items
from ..numpy.linalg.matrix_functions import matmul
from ...ir.indexing import index_params
from .tables import (
    _BINOPS,
    _CMPOPS,
    _UNSUPPORTED_EXPRESSIONS,
    _is_library,
    instead,
)
from ..external_reads import record
from ..lambdas import lambda_as_def
from .inline import LocalFunction
from ..resolve import FuncRef, ModuleRef, UserFunction, classify, module_constant
from ..static_values import StaticStr, static_compare
from ..values import NONE, NoneValue, TreeValue, TupleValue, list_value
from . import tree_access
from ...ir.indexing import FULL_SLICE


class ExpressionTranslation:
    def expr(self, node):
        for kind, what in _UNSUPPORTED_EXPRESSIONS.items():
            if isinstance(node, kind):
                raise self.error((f"{what} are not supported by adcompile" if what.endswith("s")
                                  else f"{what} is not supported by adcompile") + instead(kind),
                                 node, UnsupportedSyntaxError)
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"{type(node).__name__} expressions are not supported", node, UnsupportedSyntaxError)
        return method(node)

    def as_atom(self, value, node):
        if isinstance(value, (Var, Const)):
            return value
        if isinstance(value, TupleValue):
            kind = value.node.cls.__name__ if isinstance(value, TreeValue) else "tuple"
            raise self.error(f"a {kind} cannot be used as a number or array here (a tuple, list or dict "
                             "argument is a pytree: each of its items is an argument of its own; pass "
                             "np.asarray(...) of it for one array)", node, TypeMismatchError)
        if hasattr(value, "why_unusable"):  # a result adcompile does not compute (lstsq's residuals)
            raise self.error(value.why_unusable, node, calls.UnsupportedFunctionError)
        raise self.error(f"this value ({type(value).__name__}) cannot be used as a number or array",
                         node, TypeMismatchError)

    def expr_Constant(self, node):
        value = node.value
        if value is None:
            return NONE
        if isinstance(value, (bool, int, float)):
            return const(value)
        if isinstance(value, str):
            return StaticStr(value)  # known at compile time (static_values.py)
        raise self.error(f"constants of type {type(value).__name__} are not supported", node, TypeMismatchError)

    def expr_Name(self, node):
        return self.lookup(node.id, node)

    def lookup(self, name, node):
        if name in self.known_flags and self.depth == self.base_depth:
            return self.known_flags[name]
        if name in self.env:
            return self.env[name]
        if name in self.scope_globals:
            value = self.scope_globals[name]
            record(self.external_reads, *self.scope.source_of(name), value)
            return self.global_value(value, name, node)
        if hasattr(builtins, name):
            known = classify(getattr(builtins, name))
            if known is not None:
                return known
            raise self.error(f"the builtin '{name}' is not supported{instead(name)}", node, UnsupportedSyntaxError)
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
            record(self.external_reads, base.module, attr, value)
            known = classify(value)
            if known is None:
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
        if isinstance(base, FuncRef) and f"{base.name}.{attr}" in calls.HANDLERS:  # np.add.at
            return FuncRef(f"{base.name}.{attr}")
        if isinstance(base, UserFunction):
            raise self.error("attributes of functions are not supported", node, UnsupportedSyntaxError)
        if isinstance(base, FuncRef) and attr in ("accumulate", "at", "reduce", "outer"):
            return FuncRef(f"{base.name}.{attr}")  # a ufunc method: np.maximum.accumulate
        if isinstance(base, TreeValue):
            result = tree_access.field(self, base, attr, node)
            if result is not None:
                return result
        result = attribute_of_extension(self, base, attr, node)
        if result is not None:
            return result
        raise self.error(f"attribute '{attr}' is not supported here", node, UnsupportedSyntaxError)

    def expr_Tuple(self, node):
        return TupleValue([self.expr(e) for e in node.elts])

    def expr_List(self, node):
        return list_value([self.expr(e) for e in node.elts])

    def expr_Dict(self, node):
        return tree_access.dict_literal(self, node)

    def expr_BinOp(self, node):
        """``a + b * c - d ...``: the left operand chain of a long sum (Python nests
        ``((a + b) + c) + d``) is walked with a loop, not by recursion, so a 5,000-term
        expression translates in bounded stack depth."""
        chain = [node]
        while isinstance(chain[-1].left, ast.BinOp):
            chain.append(chain[-1].left)
        value = self.expr(chain[-1].left)
        for link in reversed(chain):
            op = _BINOPS.get(type(link.op))
            if op is None:
                raise self.error("unsupported operator", link, UnsupportedSyntaxError)
            value = self.binop(op, value, self.expr(link.right), link)
        return value

    def binop(self, op, left, right, node):
        if isinstance(left, TupleValue) and isinstance(right, TupleValue) and op == "add":
            return TupleValue(left.items + right.items)
        left, right = self.as_atom(left, node), self.as_atom(right, node)
        if op == "matmul":
            return matmul(self, left, right, node)
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
            elif all(isinstance(s, Assign) and has_kind(s.prim, Kind.CHEAP_AND_SAFE) for s in block):
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
            elif static_compare(type(op).__name__, left, right) is not None:
                part = const(static_compare(type(op).__name__, left, right))
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

    def expr_Lambda(self, node):
        """A lambda in compiled code is a nested def (inlined where it is called)."""
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error("star-args, keyword-only and positional-only parameters are not supported",
                             node, UnsupportedSyntaxError)
        return LocalFunction(lambda_as_def(node, "lambda"), self, [self.expr(d) for d in args.defaults])

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
        self.conditional_values.add(var)  # named, in messages, by the variable it is bound to
        body.append(self.assignment(var, a))  # the branch of the narrower dtype converted, as for if/else
        orelse.append(self.assignment(var, b))
        self.block.append(If(cond, body, orelse, self.loc))
        return var

    def expr_Subscript(self, node):
        base = self.expr(node.value)
        if isinstance(base, TreeValue) and base.is_mapping:
            return tree_access.mapping_item(self, base, self.expr(node.slice), node)
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
            if isinstance(value, TupleValue):  # x[[0, 2]], A[np.triu_indices(n)]
                items += sequence_index_items(self, value, part, isinstance(part, ast.List))
            elif isinstance(value, NoneValue):
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
            items[k:k + 1] = [FULL_SLICE] * max(base.type.ndim - consumed, 0)
        return items

    def getitem(self, array, items, node):
        if any(item[0] == "mask" for item in items):
            return masked_read(self, array, items, node)
        inner_gather = gather_of_inner_axis(self, array, items, node)
        if inner_gather is not None:
            return inner_gather
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


