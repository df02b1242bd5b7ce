"""The errors adcompile raises about the user's code.

Every error that is the user's to fix is an ``AdCompileError``. When it concerns a place in
the user's source, the message names the file, line and column and quotes the line with a
caret, the way Python's own SyntaxError does.
"""


class AdCompileError(Exception):
    """Base of every error adcompile raises for the user's code or call."""


class UnsupportedSyntaxError(AdCompileError):
    """A Python construct the compiler does not translate (try, lambda, yield, ...)."""


class UnsupportedFunctionError(AdCompileError):
    """A call to a function or method the compiler does not know."""


class NoDerivativeRuleError(AdCompileError):
    """A primitive without a derivative rule reached a transform."""


class TypeMismatchError(AdCompileError):
    """Values of incompatible kinds met (a scalar became an array, a tuple was indexed...)."""


class CallError(AdCompileError):
    """A compiled or derived function was called with arguments it cannot take."""


class SourceUnavailableError(AdCompileError):
    """The function's source code cannot be retrieved (built-ins, exec'd code, lambdas)."""


class ShapeError(AdCompileError, ValueError):
    """Arrays of incompatible shapes met at run time (operands that do not broadcast, a matmul
    of mismatched sizes); the message names the user's line. Also a ``ValueError``, as numpy's."""


class ReadOnlyArgumentError(AdCompileError, ValueError):
    """A compiled function that writes into an argument was given a read-only array; the
    message starts with numpy's words (``assignment destination is read-only``) and names the
    user's line of the write. Also a ``ValueError``, as numpy's."""


class GeneratedCodeError(AdCompileError):
    """numba rejected the code adcompile generated: an adcompile bug, reported with the user
    line the failing generated statement came from."""


class GradcheckError(AdCompileError, AssertionError):
    """A derivative disagrees with finite differences (``adcompile.gradcheck``)."""


class InternalError(AdCompileError):
    """adcompile reached a state it should never reach (a transform that did not converge): an
    adcompile bug, reported with the function it was compiling."""


class Location:
    """A place in the user's source: file, line, column and the text of the line."""

    __slots__ = ("filename", "lineno", "col", "line")

    def __init__(self, filename, lineno, col, line):
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.line = line

    def describe(self):
        caret = " " * (len(self.line) - len(self.line.lstrip()) if self.col is None else self.col)
        return f'  File "{self.filename}", line {self.lineno}, column {(self.col or 0) + 1}\n' \
               f"    {self.line}\n    {caret}^"

    def __repr__(self):
        return f"{self.filename}:{self.lineno}"


def located(error_class, message, location):
    """Build ``error_class`` whose message ends with the quoted source line of ``location``
    (kept as its ``location`` attribute, for tools that point further, such as the CLI)."""
    if location is None:
        return error_class(message)
    error = error_class(f"{message}\n{location.describe()}")
    error.location = location
    return error
