"""Getting a function's source and AST, with locations that point into the user's file."""
import ast
import inspect
import textwrap

from ..errors import Location, SourceUnavailableError
from .lambdas import is_lambda, lambda_definition


class FunctionSource:
    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        if is_lambda(pyfunc):  # found in its whole file (``lambdas.py``)
            self.node, self.lines, self.filename = lambda_definition(pyfunc)
            self.first_line, self.indent = 1, 0
            return
        try:
            lines, first = inspect.getsourcelines(pyfunc)
            self.filename = inspect.getsourcefile(pyfunc) or "<unknown>"
        except (OSError, TypeError) as exc:
            name = getattr(pyfunc, "__qualname__", repr(pyfunc))
            raise SourceUnavailableError(
                f"cannot compile {name}: its source code is not available ({exc}). adcompile "
                f"needs functions defined in a file (not in exec'd strings or C code)") from None
        self.lines = [line.rstrip("\n") for line in lines]
        self.first_line = first
        text = textwrap.dedent("".join(lines))
        self.indent = len(lines[0]) - len(lines[0].lstrip())
        tree = ast.parse(text)
        node = tree.body[0]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise SourceUnavailableError(f"cannot compile {pyfunc!r}: it is not a def function")
        self.node = node

    def location(self, node):
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return None
        index = lineno - 1
        line = self.lines[index] if 0 <= index < len(self.lines) else ""
        col = getattr(node, "col_offset", 0) + self.indent
        return Location(self.filename, self.first_line + index, col, line)


def function_name(pyfunc):
    """The name generated code gives ``pyfunc``: its ``__name__``, or for a lambda the name it is
    assigned to or ``lambda_<line>`` (``lambdas.py``; "lambda" while its source is unreadable)."""
    if not is_lambda(pyfunc):
        return getattr(pyfunc, "__name__", "function")
    try:
        return lambda_definition(pyfunc)[0].name
    except SourceUnavailableError:
        return "lambda"
