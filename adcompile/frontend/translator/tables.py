"""Tables and small helpers shared by the translator's parts (``../parse.py``, ``statements.py``,
``expressions.py``): unsupported constructs, operator maps."""
import ast

from ...errors import AdCompileError

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
    """A loop-carried variable's type widened: translate the function again."""


MAX_TYPE_ROUNDS = 8  # each round widens at least one loop-carried type, and a type widens a few times at most


def until_types_settle(attempt, what="type inference"):
    """``attempt()``, again while it raises ``_Retry``: each round translates the function once
    more with the type hints that the rounds before it gathered. An error after
    MAX_TYPE_ROUNDS rounds."""
    for _ in range(MAX_TYPE_ROUNDS):
        try:
            return attempt()
        except _Retry:
            continue
    raise AdCompileError(f"{what} did not converge")


def _is_library(module):
    return module.__name__.split(".")[0] in ("numpy", "math", "scipy", "numba", "builtins")


def _kind(type_):
    return "a scalar" if type_.ndim == 0 else f"a {type_.ndim}-d array"
