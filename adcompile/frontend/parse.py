"""Python AST -> typed IR, for one argument signature.

The translator walks the user's function once per signature (dtype and ndim of each
argument), binding names to IR atoms or to compile-time values (tuples, ranges, modules).
Straight-line top-level code is put in single-assignment form (``x = x * 2`` becomes
``x_1 = x * 2``); names assigned inside loops and branches stay mutable variables, so a loop
of the user's code stays a loop. If a variable's type widens inside a loop (``s = 0`` then
``s += x[i]``), translation restarts with the wider type.
"""
import ast

from .deep_recursion import deep_recursion, too_deeply_nested
from ..errors import AdCompileError, TypeMismatchError, UnsupportedSyntaxError, located
from ..ir.builder import Builder, Namer, const
from ..ir.memory import converted_alias_conflict
from ..ir.nodes import Assign, Const, Function, SetItem, Var, walk
from ..ir.types import B1, F8, NUMPY_NAME, Type
from ..passes.constant_conditions import resolve_constant_conditions
from .external_reads import ExternalReads, Scope
from .extensions import classify_extension
from .translator.expressions import ExpressionTranslation
from .translator.early_exits import lower_jumps
from .translator.tables import _kind, _Retry, until_types_settle
from .resolve import DTypeRef, FuncRef, UserFunction
from .source import FunctionSource
from .static_values import StaticStr
from .translator.statements import StatementTranslation
from .translator.targets import subscript_target
from .values import NONE, MethodRef, NoneValue, TupleValue, refers_to
from ..ir.indexing import FULL_SLICE


def shown_name(name):
    """How a message names the variable the translator calls ``name``: ``name#k``, item k of a
    tuple bound in a loop or branch, is ``name[k]``."""
    base, *items = name.split("#")
    return base + "".join(f"[{k}]" for k in items)


class Translator(StatementTranslation, ExpressionTranslation):
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
        self.converted_aliases = []  # see translate_body
        self.scope_globals = dict(pyfunc.__globals__)
        self.scope = Scope(pyfunc)
        # (id(container), key) -> (container, key, value): what a cache of this compile depends on,
        # each read once however often the code names it
        self.external_reads = {}
        if pyfunc.__closure__:
            for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__):
                try:
                    self.scope_globals[name] = cell.cell_contents
                except ValueError:
                    pass
        self.loc = None
        # variables of inlined functions that they returned and nothing else holds: the name
        # the caller binds one to takes it over (`y = make(x)`: y is make's array, not an alias)
        self.released = set()
        # Var -> the user's name of it, for messages: an SSA version (``x_1``) or a temporary
        # that a name was bound to (the ``_select`` of ``v = a if c else b``) is the user's ``x``, ``v``
        self.user_names = {}
        self.conditional_values = set()  # the Vars of conditional expressions (a if c else b)

    def new_callee(self, pyfunc):
        """A plain Translator for a function inlined into this one (``translator/inline.py``), sharing the
        names and type hints; ``translator/inline.py`` binds the rest."""
        callee = Translator.__new__(Translator)
        Translator.__init__(callee, pyfunc, [], namer=self.namer, hints=self.hints)
        callee.external_reads = self.external_reads
        callee.converted_aliases = self.converted_aliases
        callee.user_names = self.user_names
        callee.conditional_values = self.conditional_values
        return callee

    # ------------------------------------------------------------------ errors
    def error(self, message, node=None, cls=AdCompileError):
        loc = self.src.location(node) if node is not None else self.loc
        return located(cls, message, loc)

    def user_name(self, var):
        """The name of ``var`` in the user's source (its IR name if no user name is bound to it)."""
        return self.user_names.get(var, var.name)

    def name_for(self, var, name):
        """Record that the user's ``name`` holds ``var``, unless ``var`` has a name already
        (``name#k``, item k of a tuple bound in a loop, is shown as ``name[k]``)."""
        self.user_names.setdefault(var, shown_name(name))

    # ------------------------------------------------------------------ entry
    def translate(self):
        names = self.parameter_names()
        if len(names) != len(self.arg_types):
            raise AssertionError("signature length mismatch")
        return self.translate_body([self.bind_parameter(name, type_) for name, type_ in zip(names, self.arg_types)])

    def parameter_names(self):
        """The function's parameter names, reserved in the namer (plain positional ones only)."""
        node = self.src.node
        args = node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs:
            raise self.error("star-args, keyword-only and positional-only parameters are not supported",
                             node, UnsupportedSyntaxError)
        names = [a.arg for a in args.args]
        for name in names:
            self.namer.reserve(name)
        return names

    def bind_parameter(self, name, type_):
        """The IR parameter ``name`` of type ``type_``, bound to the name (``None`` for an
        argument given as None)."""
        if isinstance(type_, NoneValue) or type_ is None or type_.dtype == "none":
            self.env[name] = NONE
            return Var(name, Type("none"))
        var = Var(name, type_)
        self.env[name] = var
        self.name_for(var, name)
        return var

    def widen_parameters(self, params, node):
        """A parameter that a loop assigns a wider dtype (a float32 array given float64 values)
        is read through a widened copy, bound to its name at entry: a parameter's own type is
        the argument's (found on the retry that ``bind`` asks for)."""
        for var in params:
            widened = self.hints.get(var.name)
            if widened is None or var.type.dtype == "none" or widened == var.type or self.env.get(var.name) is not var:
                continue
            local = Var(self.namer.fresh(var.name), widened)
            self.name_for(local, var.name)
            conversion = Assign(local, "as_dtype", [var], {"dtype": widened.dtype}, loc=self.src.location(node))
            self.block.append(conversion)
            self.converted_aliases.append(conversion)
            self.env[var.name] = local
            self.widened_params[local] = var

    def check_converted_aliases(self, params):
        """A name numpy binds to an existing array but compiled code to a converted copy (see
        ``assignment``, ``widen_parameters``) must not be written through, nor its array
        written while the copy is still read: the invariant is ``ir.memory.converted_alias_conflict``'s;
        a located error where the write would take another course than numpy's."""
        if not self.converted_aliases:
            return
        results = [atom for atom in (self.results[0] if self.results else []) if isinstance(atom, Var)]
        conflict = converted_alias_conflict(self.block, self.converted_aliases, params, results)
        if conflict is None:
            return
        conversion, write, copy_written = conflict
        copy, source = conversion.target, conversion.args[0]
        param = self.widened_params.get(copy)
        if param is not None:
            raise located(TypeMismatchError,
                          f"'{param.name}' is written in place and also assigned "
                          f"{copy.type.describe()}; compiled code keeps one dtype per variable, "
                          f"so the write would not reach the {NUMPY_NAME[param.type.dtype]} array "
                          f"passed in: give the new value another name", write.loc)
        name, narrow = self.user_name(copy), NUMPY_NAME[source.type.dtype]
        at = f" at line {conversion.loc.lineno}" if conversion.loc is not None else ""
        if copy in self.conditional_values:
            given = (f"'{name}' is given a {narrow} array by one branch of the conditional expression{at} "
                     f"and {copy.type.describe()} by the other")
        else:
            given = f"'{name}' is also assigned {copy.type.describe()}"
        source_name = self.user_names.get(source, None if source.name.startswith("_") else source.name)
        numpy_array = f"the {narrow} array that '{name}' is given{at}"
        if source_name not in (None, name):
            numpy_array = f"'{source_name}', {numpy_array}"
        missed = (f"this write into '{name}' would not reach {numpy_array}, which is read later"
                  if copy_written else
                  f"'{name}', read later, would not see this write into {numpy_array}")
        raise located(TypeMismatchError,
                      f"{given}; compiled code keeps one dtype per variable, so '{name}' holds a converted copy "
                      f"where numpy shares one array: {missed}; give the wider value another name, or copy "
                      f"explicitly (np.copy) where '{name}' is assigned", write.loc)

    def translate_body(self, params, name=None):
        """The IR Function of the body, once ``params`` are bound in ``env``: the hidden
        parameters (global arrays) are added after ``params``."""
        node = self.src.node
        self.block = []
        self.builder = Builder(self.namer, self.block)
        self.results = None
        self.widened_params = {}  # widened copy -> the parameter it copies
        self.converted_aliases = []  # the Assigns converting an array numpy would alias (shared with inlined callees)
        self.widen_parameters(params, node)
        self.statements(node.body if self.called_rule is None else self.rule_call_body(node))
        self.check_converted_aliases(params + [var for var, _ in self.hidden_params])
        if self.results is None:
            raise self.error("the function must end with a return statement", node)
        if self.results[1] is None:
            raise self.error("the function must return a value", node, UnsupportedSyntaxError)
        params = params + [var for var, _ in self.hidden_params]
        self.block[:0] = self.result_placeholders(params)
        fn = Function(name or node.name, params, self.block, self.results[0], self.results[1], self.src.filename)
        if getattr(self, "result_structure", None) is not None:  # a nested tuple, returned flat
            fn.result_structure = self.result_structure
        fn.hidden_values = [value for _, value in self.hidden_params]
        fn.user_names = self.user_names  # for messages of later stages (transforms/scopes.py)
        fn.external_reads = ExternalReads(self.external_reads.values())
        resolve_constant_conditions(fn)
        return fn
    called_rule = None  # a custom_vjp/custom_jvp function compiled as a whole: its call is the body

    def result_placeholders(self, params):
        """Placeholders of the result variables of a function whose early returns were lowered
        to ``_result = e`` under flags (``early_exits.py``): assigned on every path at run time,
        they need a value of their type on every path numba sees too."""
        if not getattr(self.src.node, "returns_through_result", False):
            return []
        results = dict.fromkeys(a for a in self.results[0] if isinstance(a, Var) and a not in params)
        return [Assign(var, "placeholder", [], {"type": var.type}) for var in results]

    def rule_call_body(self, node):
        """``return <the rule>(<the parameters>)`` at the ``def`` line: ``grad(f)`` of a ``custom_vjp``
        function ``f`` differentiates a call of it (whose region is its rule's)."""
        self.env["<custom rule>"] = classify_extension(self.called_rule)
        self.local_function = self.called_rule  # on the call stack instead of its function, which its rules call
        call = ast.Call(ast.Name("<custom rule>", ast.Load()), [ast.Name(a.arg, ast.Load()) for a in node.args.args], [])
        body = [ast.Return(call)]
        for part in ast.walk(body[0]):
            ast.copy_location(part, node)
        return body

    # ------------------------------------------------------------------ assignment
    def assign(self, target, value, node):
        if isinstance(target, ast.Name) and isinstance(value, StaticStr):
            raise self.error("a str cannot be assigned to a variable in compiled code: strings are "
                             "compile-time values, passed to functions and compared with == / !=",
                             node, TypeMismatchError)
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
            self.setitem(*subscript_target(self, target), value, node)
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
                widened = self.widen(target.type, new_type, node, name)
                if widened != target.type:
                    self.hints[target.name] = widened
                    raise _Retry((target.name, widened), self.user_name(target), target.type, widened,
                                 self.src.location(node))
        else:
            var_name = self.namer.fresh(name.replace("#", "_"))
            type_ = self.hints.get(var_name, value.type)  # widened by a later assignment in a loop or branch
            if value in self.released and self.depth == self.base_depth:
                self.released.discard(value)
                if type_ == value.type:  # an inlined function's own array: the name takes it over
                    value.name = var_name
                    self.env[name] = value
                    self.name_for(value, name)
                    return
            target = Var(var_name, type_)
            if target.type != value.type:
                self.widen(target.type, value.type, node, name)
        self.name_for(target, name)
        if isinstance(value, Var) and value.name.startswith("_"):  # a temporary: the name it is bound to
            self.name_for(value, name)
        self.env[name] = target
        if not self.retarget(value, target):
            self.block.append(self.assignment(target, value))

    def assignment(self, target, value):
        """The statement giving the variable ``target`` the value ``value``, whose type may be
        narrower (``target`` widened for another assignment, or for the other branch of a
        conditional expression: float32 -> float64). numba unifies a variable's scalar types,
        not its array dtypes: an array of another dtype is converted, the rest aliased."""
        if target.type != value.type and target.type.ndim:
            conversion = Assign(target, "as_dtype", [value], {"dtype": target.type.dtype}, loc=self.loc)
            self.converted_aliases.append(conversion)  # a copy where numpy aliases: checked at the end
            return conversion
        return Assign(target, "alias", [value], loc=self.loc)

    def retarget(self, value, target):
        """Let the statement that computed the temporary ``value`` assign ``target`` instead
        (``x = np.sin(y)`` and ``u, v = np.sin(x), np.cos(x)`` name the new arrays directly, not
        through an alias of a temporary). Only when nothing else holds or reads the temporary
        and no statement after its definition reads or writes ``target``. Returns whether done."""
        if not (isinstance(value, Var) and value.is_temp and target.type == value.type) or self.is_bound(value):
            return False
        for k in range(len(self.block) - 1, -1, -1):
            definition = self.block[k]
            if isinstance(definition, Assign) and definition.target is value:
                break
        else:
            return False
        later = self.block[k + 1:]
        touched = {atom for stmt in walk(later) for atom in list(stmt.reads()) + list(stmt.writes())}
        if value in touched or target in touched:
            return False
        definition.target = target
        return True

    def is_bound(self, var):
        """Whether a name of this function holds ``var`` (an inlined function's parameter
        bound to the caller's temporary, an item of a tuple): then ``var`` must stay defined."""
        return any(refers_to(value, var) for value in self.env.values())

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
        result = value.like(items)  # a dict keeps its keys
        result.runtime = True
        self.env[name] = result

    def widen(self, old, new, node, name=None):
        """The type of a variable of type ``old`` that is also assigned a ``new`` value (the
        wider dtype); a located error if the two differ in ndim (``name``: the variable's)."""
        if old.ndim != new.ndim:
            if name is None:
                raise self.error(f"a value changes from {_kind(old)} to {_kind(new)}; compiled code keeps "
                                 "one type per variable", node, TypeMismatchError)
            shown = shown_name(name)
            instead = (f"start '{shown}' as an array of that shape (np.zeros(...)), or give the array a new name"
                       if old.ndim == 0 else f"give the{_kind(new)[1:]} a new name, and read it by that name")
            raise self.error(f"'{shown}' is {_kind(old)} and is given {_kind(new)} here; compiled code keeps "
                             f"one type per variable, so '{shown}' cannot hold both: {instead}",
                             node, TypeMismatchError)
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
        return value, [FULL_SLICE] * array.type.ndim


def translate(pyfunc, arg_types, namer=None, called_rule=None):
    """The typed IR ``Function`` of ``pyfunc`` for arguments of ``arg_types`` (of a call of the
    ``custom_vjp``/``custom_jvp`` function ``called_rule`` of ``pyfunc``, if given)."""
    hints = {}

    def attempt():
        try:
            with deep_recursion():
                tr = Translator(pyfunc, arg_types, namer=Namer() if namer is None else namer, hints=hints)
                tr.called_rule = called_rule
                return tr.translate()
        except RecursionError:
            raise too_deeply_nested(pyfunc) from None
    return until_types_settle(attempt)


__all__ = ["translate", "Translator", "B1", "F8", "DTypeRef", "FuncRef", "MethodRef", "UserFunction"]
