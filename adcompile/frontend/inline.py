"""Calls to other Python functions from compiled code are inlined into the caller's IR.

The callee (a plain Python function or an ``@adcompile.compile`` function) is translated
with its parameters bound to the argument values, into the caller's current block, with
fresh names; its return value becomes the call's value. Defaults and keyword arguments
follow Python's rules. Recursion is reported as an error.
"""
import ast
import inspect

from ..errors import AdCompileError, UnsupportedSyntaxError
from ..ir.builder import Builder
from ..ir.nodes import Assign, Var
from .values import NONE


def _underlying(pyfunc):
    return getattr(pyfunc, "__adcompile_python__", pyfunc)


def bind_arguments(tr, pyfunc, args, kwargs, node):
    signature = inspect.signature(pyfunc)
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise tr.error(f"bad call to {pyfunc.__name__}: {exc}", node, AdCompileError) from None
    values = {}
    for name, param in signature.parameters.items():
        if name in bound.arguments:
            values[name] = bound.arguments[name]
        elif param.default is not inspect.Parameter.empty:
            values[name] = tr.global_value(param.default, name, node)
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise tr.error(f"{pyfunc.__name__} takes *args/**kwargs, which is not supported", node,
                           UnsupportedSyntaxError)
    return values


def _assigned_names(fn_node):
    return {n.id for n in ast.walk(fn_node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def inline_call(tr, pyfunc, args, kwargs, node):
    from .parse import Translator
    pyfunc = _underlying(pyfunc)
    stack = getattr(tr, "call_stack", ()) + (tr.pyfunc,)
    if pyfunc in stack:
        chain = " -> ".join(f.__name__ for f in stack[stack.index(pyfunc):] + (pyfunc,))
        raise tr.error(f"recursive call ({chain}): adcompile inlines the functions a compiled "
                       "function calls, so recursion is not supported; write it as a loop", node,
                       UnsupportedSyntaxError)
    values = bind_arguments(tr, pyfunc, args, kwargs, node)
    callee = Translator.__new__(Translator)
    Translator.__init__(callee, pyfunc, [], namer=tr.namer, hints=tr.hints)
    callee.hidden_params = tr.hidden_params
    callee.call_stack = stack
    callee.depth = callee.base_depth = tr.depth
    callee.block = tr.block
    callee.builder = Builder(tr.namer, tr.block, tr.loc)
    callee.results = None
    callee.env = {}
    rebound = _assigned_names(callee.src.node)
    for name, value in values.items():
        # A parameter the callee assigns to gets its own variable; one it only reads (or
        # writes items of, like Python's call by sharing) is the caller's variable itself.
        if isinstance(value, Var) and name in rebound:
            local = Var(tr.namer.fresh(name), value.type)
            tr.block.append(Assign(local, "alias", [value], loc=tr.loc))
            value = local
        callee.env[name] = value
    callee.statements(callee.src.node.body)
    if callee.results is None:
        return NONE
    atoms, is_tuple = callee.results
    if is_tuple is None:
        return NONE
    if is_tuple:
        from .values import TupleValue
        return TupleValue(atoms)
    return atoms[0]
