"""Getting a function's source and AST, with locations that point into the user's file."""
import ast
import inspect
import textwrap

from ..errors import Location, SourceUnavailableError


class FunctionSource:
    def __init__(self, pyfunc):
        self.pyfunc = pyfunc
        try:
            lines, first = inspect.getsourcelines(pyfunc)
            self.filename = inspect.getsourcefile(pyfunc) or "<unknown>"
        except (OSError, TypeError) as exc:
            name = getattr(pyfunc, "__qualname__", repr(pyfunc))
            raise SourceUnavailableError(
                f"cannot compile {name}: its source code is not available ({exc}). adcompile "
                f"needs functions defined in a file (not in exec'd strings, lambdas or C code)") from None
        self.lines = [line.rstrip("\n") for line in lines]
        self.first_line = first
        text = textwrap.dedent("".join(lines))
        self.indent = len(lines[0]) - len(lines[0].lstrip())
        tree = ast.parse(text)
        node = tree.body[0]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            raise SourceUnavailableError(f"cannot compile {pyfunc!r}: it is not a def function (a lambda?)")
        self.node = node

    def location(self, node):
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return None
        index = lineno - 1
        line = self.lines[index] if 0 <= index < len(self.lines) else ""
        col = getattr(node, "col_offset", 0) + self.indent
        return Location(self.filename, self.first_line + index, col, line)
