"""What ``adcompile source`` says when it was given no ``--args`` and the function needs arrays.

Without ``--args`` every argument is taken as a float scalar. When the function then fails
to compile because a value is used as an array (``W @ x``, ``x[0]``, ``x.shape[0]``), the
error is the user's command line, not their code: ``needs_shapes`` turns it into a usage error
naming the parameters read by the expression the error points at, with the command to run.
"""
import ast
import shlex

from ..errors import TypeMismatchError
from .errors import UsageError


def needs_shapes(error, fn, argv_hint):
    """A ``UsageError`` for ``error`` (raised compiling ``fn`` with scalar arguments), or None
    when the error is not about a scalar used as an array. ``argv_hint`` is the command as run,
    without ``--args``."""
    location = getattr(error, "location", None)
    if not isinstance(error, TypeMismatchError) or location is None:
        return None
    names = _parameters_read_at(location, fn.param_names)
    if not names:
        return None
    example = " ".join(f"{name}=(3,)" if name in names else f"{name}=()" for name in fn.param_names)
    used = ", ".join(names)
    return UsageError(
        f"{fn.name} needs argument shapes: without --args every argument is a float scalar, and "
        f"{used} {'is' if len(names) == 1 else 'are'} used as {'an array' if len(names) == 1 else 'arrays'} "
        f"here:\n{location.describe()}\n({str(error).splitlines()[0]})\n"
        f"Give each argument its shape with --args, e.g.\n"
        f"    {argv_hint} --args {shlex.quote(example)}\n"
        f"((3,) is a vector, (3, 4) a matrix, () a float, int:5 an integer)")


def _parameters_read_at(location, parameters):
    """The parameters (in order) read by the innermost expression (not a lone name) starting at
    ``location``, or else by the innermost one around it that reads any (``x[0]`` for an error
    pointing at its index)."""
    try:
        with open(location.filename) as file:
            tree = ast.parse(file.read())
    except (OSError, SyntaxError, ValueError):
        return []
    position = (location.lineno, location.col)
    compound = [node for node in ast.walk(tree) if isinstance(node, ast.expr)
                and not isinstance(node, ast.Name) and _starts(node) <= position <= _ends(node)]
    starting = [node for node in compound if _starts(node) == position]
    for candidates in (starting, compound):
        for node in sorted(candidates, key=_extent):
            read = {name.id for name in ast.walk(node) if isinstance(name, ast.Name)}
            if read & set(parameters):
                return [name for name in parameters if name in read]
    return []


def _starts(node):
    return node.lineno, node.col_offset


def _ends(node):
    return node.end_lineno, node.end_col_offset


def _extent(node):
    return node.end_lineno - node.lineno, node.end_col_offset - node.col_offset
