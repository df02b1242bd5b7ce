"""IR nodes: values (Var, Const), statements and functions.

A function body is a list of statements. Variables are named storage locations, as in
Python: a name may be assigned more than once (inside loops and branches; straight-line
top-level code is renamed to single assignment by the frontend). Control flow is
structured: ``If``, ``For`` (over a range) and ``While`` hold nested statement lists, so a
loop of the user's code stays a loop in every derived function.

    Assign(target, prim, args, params)   target = prim(*args, **params)
    SetItem(array, value, index)         array[index] = value       (in-place write)
    AccumItem(array, value, index)       array[index] += value      (adjoint scatter)
    Push(tape, value) / Pop(target, tape) stack operations of the reverse sweep
    If(cond, body, orelse)
    For(index, start, stop, step, body)  for index in range(start, stop, step)
    While(cond_body, cond, body)         while True: cond_body; if not cond: break; body
"""
import itertools

from .printer import format_function
from .types import B1, F8, I8, Type

_counter = itertools.count()


class Var:
    """A named, typed storage location."""

    __slots__ = ("name", "type", "is_temp", "uid")

    def __init__(self, name, type_, is_temp=False):
        assert isinstance(type_, Type), type_
        self.name = name
        self.type = type_
        self.is_temp = is_temp
        self.uid = next(_counter)

    def __repr__(self):
        return f"{self.name}:{self.type}"


class TapeArray(Var):
    """A 1-d array of saved scalars with a stack pointer (``transforms/reverse/taping.py``): the
    array is allocated for, or grown before, every push, and the backward pops what the forward
    pushed, so its element writes and reads at the pointer are in range by construction and
    code generation emits them unchecked (``rt.tape_store``/``rt.tape_load``). A copy of the
    variable made by a transform is a plain ``Var``, indexed as any other."""

    __slots__ = ()


class Const:
    """A compile-time constant scalar (or None / a bool)."""

    __slots__ = ("value", "type")

    def __init__(self, value, type_):
        self.value = value
        self.type = type_

    def __repr__(self):
        return repr(self.value)


def const(value, type_=None):
    """A Const of ``value``, typed by its Python type unless ``type_`` is given."""
    if type_ is None:
        if isinstance(value, bool):
            type_ = B1
        elif isinstance(value, int):
            type_ = I8
        else:
            type_ = F8
    return Const(value, type_)


def is_var(atom):
    return isinstance(atom, Var)


class Stmt:
    loc = None  # errors.Location of the user's line this statement comes from

    def reads(self):
        """Atoms this statement reads directly (not in nested blocks)."""
        return []

    def writes(self):
        """Vars this statement assigns or mutates directly."""
        return []

    def blocks(self):
        return []


class Assign(Stmt):
    __slots__ = ("target", "prim", "args", "params", "loc", "inplace")

    def __init__(self, target, prim, args, params=None, loc=None, inplace=False):
        self.target = target
        self.prim = prim
        self.args = list(args)
        self.params = params or {}
        self.loc = loc
        self.inplace = inplace  # codegen may emit `target op= arg` (target owns its buffer)

    def reads(self):
        return self.args

    def writes(self):
        return [self.target]

    def __repr__(self):
        params = f" {self.params}" if self.params else ""
        return f"{self.target!r} = {self.prim}({', '.join(map(repr, self.args))}){params}"


class SetItem(Stmt):
    """``array[items] = value``; ``items`` as in ``ir/indexing.py`` (holding atoms)."""

    __slots__ = ("array", "value", "items", "loc")

    def __init__(self, array, value, items, loc=None):
        self.array, self.value, self.items, self.loc = array, value, list(items), loc

    @property
    def index_args(self):
        return [a for item in self.items for a in item[1:] if a is not None]

    def reads(self):
        return [self.array, self.value] + self.index_args

    def writes(self):
        return [self.array]

    def __repr__(self):
        return f"{self.array.name}[{self.items}] = {self.value!r}"


class AccumItem(SetItem):
    """``array[items] += value``, repeated integer-array indices accumulating."""

    def __repr__(self):
        return f"{self.array.name}[{self.items}] += {self.value!r}"


class Comment(Stmt):
    """A comment line in the generated source; no effect."""

    __slots__ = ("text", "loc")

    def __init__(self, text):
        self.text, self.loc = text, None

    def __repr__(self):
        return f"# {self.text}"


class Push(Stmt):
    __slots__ = ("tape", "value", "loc")

    def __init__(self, tape, value, loc=None):
        self.tape, self.value, self.loc = tape, value, loc

    def reads(self):
        return [self.tape, self.value]

    def writes(self):
        return [self.tape]

    def __repr__(self):
        return f"push({self.tape.name}, {self.value!r})"


class Pop(Stmt):
    __slots__ = ("target", "tape", "loc")

    def __init__(self, target, tape, loc=None):
        self.target, self.tape, self.loc = target, tape, loc

    def reads(self):
        return [self.tape]

    def writes(self):
        return [self.target, self.tape]

    def __repr__(self):
        return f"{self.target!r} = pop({self.tape.name})"


class If(Stmt):
    """``if cond: body else: orelse``. ``unfused_fallback``: the lowering wrote it -- ``body`` is a
    loop nest and ``orelse`` the unfused statements it replaces, run where the loop's run-time
    check fails (``lowering/deferred_fallbacks.py``)."""

    __slots__ = ("cond", "body", "orelse", "loc", "unfused_fallback")

    def __init__(self, cond, body, orelse, loc=None, unfused_fallback=False):
        self.cond, self.body, self.orelse, self.loc = cond, body, orelse, loc
        self.unfused_fallback = unfused_fallback

    def reads(self):
        return [self.cond]

    def blocks(self):
        return [self.body, self.orelse]


class For(Stmt):
    __slots__ = ("index", "start", "stop", "step", "body", "loc")

    def __init__(self, index, start, stop, step, body, loc=None):
        self.index, self.start, self.stop, self.step, self.body, self.loc = index, start, stop, step, body, loc

    def reads(self):
        return [self.start, self.stop, self.step]

    def writes(self):
        return [self.index]

    def blocks(self):
        return [self.body]


class While(Stmt):
    __slots__ = ("cond_body", "cond", "body", "loc")

    def __init__(self, cond_body, cond, body, loc=None):
        self.cond_body, self.cond, self.body, self.loc = cond_body, cond, body, loc

    def reads(self):
        return [self.cond]

    def blocks(self):
        return [self.cond_body, self.body]


class CustomCall(Stmt):
    """A region with its own derivative: a custom Function call (``MyFn.apply``) or a derivative
    called inside compiled code. ``forward`` is its inlined body, which computes ``outputs``
    from ``inputs``; reverse mode does not differentiate ``forward`` but calls
    ``info.reverse_rule(ctx, stmt, builder)`` (see ``transforms/reverse/context.py``)."""

    __slots__ = ("outputs", "inputs", "forward", "info", "loc")

    def __init__(self, outputs, inputs, forward, info, loc=None):
        self.outputs, self.inputs, self.forward, self.info, self.loc = outputs, list(inputs), forward, info, loc

    def reads(self):
        return [a for a in self.inputs if isinstance(a, Var)]

    def writes(self):
        return []  # the outputs are assigned by statements of ``forward`` (counted once there)

    def blocks(self):
        return [self.forward]

    def __repr__(self):
        return f"{self.outputs!r} = custom {self.info!r}({self.inputs!r})"


class Function:
    """A typed IR function: parameters, body and the returned atoms."""

    def __init__(self, name, params, body, results, returns_tuple, source_file=None):
        self.name = name
        self.params = params
        self.body = body
        self.results = results
        self.returns_tuple = returns_tuple
        self.source_file = source_file

    def __repr__(self):
        return format_function(self)


def walk(block, into_custom=True):
    """Every statement in ``block`` and its nested blocks, in program order (the bodies of
    custom Function calls included unless ``into_custom`` is False)."""
    pending = [iter(block)]  # the blocks being walked, innermost last (no recursion: deep nests)
    while pending:
        for stmt in pending[-1]:
            yield stmt
            if not into_custom and isinstance(stmt, CustomCall):
                continue
            inner = stmt.blocks()
            if inner:
                pending.append(itertools.chain.from_iterable(inner))
                break
        else:
            pending.pop()


def vars_read(block):
    """Every Var read anywhere in ``block`` (including nested control statements)."""
    for stmt in walk(block):
        for atom in stmt.reads():
            if isinstance(atom, Var):
                yield atom
