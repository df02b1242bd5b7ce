"""Tables and small helpers shared by the translator's parts (``parse.py``, ``statements.py``,
``expressions.py``): unsupported constructs, operator maps."""
import ast

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
_CMPOPS = {ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge", ast.Eq: "eq", ast.NotEq: "ne"}


class _Retry(Exception):
    """A loop-carried variable's type widened: translate the function again."""


def _is_library(module):
    return module.__name__.split(".")[0] in ("numpy", "math", "scipy", "numba", "builtins")


def _kind(type_):
    return "a scalar" if type_.ndim == 0 else f"a {type_.ndim}-d array"
