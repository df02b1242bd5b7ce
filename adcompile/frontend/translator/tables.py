"""Tables and small helpers shared by the translator's parts (``../parse.py``, ``statements.py``,
``expressions.py``): unsupported constructs, operator maps."""
import ast

from ...errors import InternalError, located
from ...ir.types import NUMPY_NAME

_UNSUPPORTED_STATEMENTS = {
    ast.Try: "try/except", ast.With: "with", ast.AsyncWith: "async with", ast.Global: "global",
    ast.Nonlocal: "nonlocal", ast.ClassDef: "class definitions",
    ast.AsyncFunctionDef: "nested async def", ast.Delete: "del", ast.Raise: "raise",
    ast.Import: "import", ast.ImportFrom: "import", ast.AsyncFor: "async for",
}
_UNSUPPORTED_EXPRESSIONS = {
    ast.Yield: "yield", ast.YieldFrom: "yield from", ast.Await: "await",
    ast.ListComp: "list comprehensions", ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions",
    ast.Set: "set literals", ast.JoinedStr: "f-strings",
    ast.NamedExpr: "the walrus operator", ast.Starred: "star-arguments",
}
# What to write instead, after "... is not supported by adcompile"
_INSTEAD = {
    ast.ListComp: "fill a preallocated array in a for loop (out = np.empty(n); for i in range(n): out[i] = ...)",
    ast.GeneratorExp: "sum or fill in a for loop over range(...)",
    ast.JoinedStr: "error messages of assert may be plain string literals",
}
_BUILTINS_INSTEAD = {
    "print": "compiled code has no side effects: return the value to look at it, or compile with "
             "backend=\"python\" and set a breakpoint in the generated file (adcompile.source_path(f))",
    "list": "fill a preallocated array (np.empty) or use a tuple",
    "dict": "pass the arrays as separate arguments",
    "open": "read files outside the compiled function and pass the arrays in",
    "input": "read input outside the compiled function and pass the values in",
}
# What to write instead of an attribute of a value (``loss.backward()``), PyTorch habits first
ATTRIBUTES_INSTEAD = {
    "backward": "compiled code computes numbers, not a graph to call .backward() on: return the "
                "loss and differentiate the function from outside, with adcompile.grad(loss_fn)(...) "
                "(a function returning the gradient) or adcompile.backward(loss_fn, model, *args) "
                "(fills each parameter's .grad, as loss.backward() does in PyTorch)",
    "grad": "compiled code computes numbers, not a graph: get gradients from outside with "
            "adcompile.grad(loss_fn)(...) or adcompile.backward(loss_fn, model, *args)",
}
RANDOM_INSTEAD = ("random numbers cannot be drawn inside compiled code: draw them outside "
                  "(rng = np.random.default_rng(seed); noise = rng.normal(size=...)) and pass them in "
                  "as an argument, or use the seeded adcompile.nn.functional.dropout")


def instead(what):
    """'; <what to write instead>' for an unsupported construct, or ''."""
    hint = _INSTEAD.get(what) if isinstance(what, type) else _BUILTINS_INSTEAD.get(what)
    return f"; {hint}" if hint else ""


_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow",
           ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.MatMult: "matmul"}
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}


class _Retry(Exception):
    """A loop-carried variable's type widened: translate the function again. ``key``: the IR
    name and the wider type its hint now holds; ``name``: the user's name of the variable,
    ``old``/``new`` its type and the wider one, ``location`` the assignment that widened it."""

    def __init__(self, key=None, name=None, old=None, new=None, location=None):
        super().__init__(name)
        self.key, self.name, self.old, self.new, self.location = key, name, old, new, location


# A safety bound only: each round widens one variable's hint (a type widens three times at
# most: bool -> int64 -> float32 -> float64), and a hint that does not take effect is caught
# in the round that repeats it.
MAX_TYPE_ROUNDS = 200


def until_types_settle(attempt, what="type inference"):
    """``attempt()``, again while it raises ``_Retry``: each round translates the function once
    more with the type hints that the rounds before it gathered. A round that widens a variable
    to a type an earlier round gave its hint already made no progress (the hint was not applied:
    an adcompile bug): an ``InternalError`` naming the variable and its line, as after
    MAX_TYPE_ROUNDS rounds."""
    seen = set()
    retry = None
    for _ in range(MAX_TYPE_ROUNDS):
        try:
            return attempt()
        except _Retry as error:
            retry = error
            if error.key is not None and error.key in seen:
                break
            seen.add(error.key)
    raise _not_settled(what, retry)


def _not_settled(what, retry):
    """The InternalError of type inference that does not settle, at the assignment that last widened."""
    if retry is None or retry.name is None:
        return InternalError(f"{what} did not converge")
    numpy_name = NUMPY_NAME[retry.new.dtype]
    return located(InternalError,
                   f"{what} did not converge: '{retry.name}' is widened from {retry.old.describe()} to "
                   f"{retry.new.describe()} here in every round, as if the wider type found before were not "
                   f"applied. This is an adcompile bug: please report it. Meanwhile, give '{retry.name}' "
                   f"the wider type where it is first assigned (for example np.{numpy_name}(...) for a scalar or "
                   f".astype(np.{numpy_name}) for an array)", retry.location)


def _is_library(module):
    return module.__name__.split(".")[0] in ("numpy", "math", "scipy", "numba", "builtins")


def _kind(type_):
    return "a scalar" if type_.ndim == 0 else f"a {type_.ndim}-d array"
