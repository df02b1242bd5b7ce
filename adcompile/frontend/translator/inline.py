"""Calls to other Python functions from compiled code are inlined into the caller's IR.

The callee (a plain Python function or an ``@adcompile.compile`` function) is translated
with its parameters bound to the argument values, into the caller's current block, with
fresh names; its return value becomes the call's value. Defaults and keyword arguments
follow Python's rules. Recursion is reported as an error.
"""
import ast
import copy
import inspect

from ...errors import AdCompileError, UnsupportedSyntaxError
from ...ir.builder import Builder
from ...ir.nodes import Const, Var
from .early_exits import lower_jumps
from ..values import NONE, TupleValue, refers_to, value_of_structure


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


def _check_recursion(tr, callee, node):
    stack = getattr(tr, "call_stack", ()) + (getattr(tr, "local_function", None) or tr.pyfunc,)
    if callee in stack:
        chain = " -> ".join(f.__name__ for f in stack[stack.index(callee):] + (callee,))
        raise tr.error(f"recursive call ({chain}): adcompile inlines the functions a compiled "
                       "function calls, so recursion is not supported; write it as a loop", node,
                       UnsupportedSyntaxError)
    return stack


def inline_call(tr, pyfunc, args, kwargs, node):
    pyfunc = _underlying(pyfunc)
    stack = _check_recursion(tr, pyfunc, node)
    values = bind_arguments(tr, pyfunc, args, kwargs, node)
    callee = tr.new_callee(pyfunc)
    return _inline(tr, callee, stack, values, {})


class LocalFunction:
    """A ``def`` nested in a compiled function: inlined where it is called, reading the
    enclosing function's variables as they are at the call (Python's late binding)."""

    def __init__(self, def_node, definer, defaults):
        self.node = def_node
        self.__name__ = def_node.name
        self.definer = definer
        self.defaults = defaults

    def bind(self, tr, args, kwargs, node):
        names = [a.arg for a in self.node.args.args]
        if len(args) > len(names):
            raise tr.error(f"{self.__name__}() takes {len(names)} arguments but {len(args)} were given",
                           node, AdCompileError)
        values = dict(zip(names[len(names) - len(self.defaults):], self.defaults))
        values.update(zip(names, args))
        for name, value in kwargs.items():
            if name not in names or name in names[:len(args)]:
                raise tr.error(f"bad keyword argument '{name}' in call to {self.__name__}()", node,
                               AdCompileError)
            values[name] = value
        missing = [n for n in names if n not in values]
        if missing:
            raise tr.error(f"{self.__name__}() is missing argument(s): {', '.join(missing)}", node,
                           AdCompileError)
        return values

    def compile_call(self, tr, args, kwargs, node):
        stack = _check_recursion(tr, self, node)
        values = self.bind(tr, args, kwargs, node)
        definer = self.definer
        callee = tr.new_callee(definer.pyfunc)
        callee.src = copy.copy(definer.src)
        callee.src.node = lower_jumps(self.node)
        callee.jump_flags = getattr(self.node, "jump_flags", set())
        callee.scope_globals = definer.scope_globals
        callee.scope = definer.scope
        callee.local_function = self
        local = _assigned_names(self.node) | set(values)
        enclosing = {name: value for name, value in definer.env.items() if name not in local}
        return _inline(tr, callee, stack, values, enclosing)


def _inline(tr, callee, stack, values, enclosing):
    """Translate ``callee``'s body into ``tr``'s current block with its parameters bound to
    ``values`` (and free names to ``enclosing``); its return value is the call's value."""
    callee.hidden_params = tr.hidden_params
    callee.call_stack = stack
    callee.depth = callee.base_depth = tr.depth
    callee.block = tr.block
    callee.builder = Builder(tr.namer, tr.block, tr.loc)
    callee.results = None
    callee.env = dict(enclosing)
    rebound = _assigned_names(callee.src.node)
    for name, value in values.items():
        # A parameter the callee assigns to gets its own variable; one it only reads (or
        # writes items of, like Python's call by sharing) is the caller's variable itself.
        if isinstance(value, (Var, Const)) and name in rebound:
            fresh = tr.namer.fresh(name)
            local = Var(fresh, tr.hints.get(fresh, value.type))  # widened (int -> float) on a retry
            # a temporary argument becomes the parameter itself
            # (an array of a narrower dtype is converted: numba keeps one dtype per variable)
            if not (isinstance(value, Var) and local.type == value.type and tr.retarget(value, local)):
                tr.block.append(tr.assignment(local, value))
            value = local
            tr.name_for(local, name)
        elif isinstance(value, Var) and value.name.startswith("_"):
            tr.name_for(value, name)  # a temporary of the caller: named by the parameter in messages
        callee.env[name] = value
    callee.statements(callee.src.node.body)
    if callee.results is None:
        return NONE
    atoms, is_tuple = callee.results
    if is_tuple is None:
        return NONE
    passed_in = list(values.values()) + list(enclosing.values())
    for atom in atoms:  # the callee's own arrays, which its caller may name (see Translator.bind)
        if (isinstance(atom, Var) and not atom.is_temp and not tr.is_bound(atom)
                and not any(refers_to(value, atom) for value in passed_in)
                and all(atom is not var for var, _ in tr.hidden_params)):
            tr.released.add(atom)
    structure = getattr(callee, "result_structure", None)
    if structure is not None:  # a nested tuple (output, (h_n, c_n)), a list or a dict
        return value_of_structure(structure, atoms)
    if is_tuple:
        return TupleValue(atoms)
    return atoms[0]

