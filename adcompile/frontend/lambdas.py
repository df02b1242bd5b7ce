"""A lambda's source: the ``lambda`` expression its code object was compiled from, as a ``def``.

Python keeps no source for a lambda of its own: ``inspect`` gives the lines of the statement
around it, which may hold several lambdas (``f, g = lambda x: x, lambda x: -x``) or only part of
a statement. So the whole file is parsed and the lambda is found among the ``ast.Lambda`` nodes
that start on the code object's first line:

- by position: the instructions of the code (``co_positions``) span exactly the lambda's body
  (``lambda x: np.sin(x)`` from ``np`` to the closing parenthesis), which tells apart lambdas
  on one line, even nested ones;
- where positions are not recorded (``python -X no_debug_ranges``), by the parameter names,
  and if two lambdas on the line take the same names, that is an error naming the line.

The lambda becomes ``def <name>(<its parameters>): return <its body>`` with the body's
locations, so errors point into the user's line. ``<name>`` is the name it is assigned to
(``loss = lambda w: ...`` gives ``loss``), else ``lambda_<line>`` (``lambda_<line>_<k>`` for the
k-th of several lambdas on one line): a pure function of the source, as generated names must be.
"""
import ast
import inspect

from ..errors import Location, SourceUnavailableError, located


def is_lambda(pyfunc):
    return getattr(pyfunc, "__name__", None) == "<lambda>" and hasattr(pyfunc, "__code__")


def unavailable(pyfunc, reason):
    """The error for a lambda whose source cannot be read, located at its line where known."""
    code = pyfunc.__code__
    where = Location(code.co_filename, code.co_firstlineno, None, "") if code.co_filename else None
    message = (f"cannot compile the lambda defined at {code.co_filename}, line {code.co_firstlineno}: {reason}. "
               "adcompile reads a lambda's expression from its source file; a lambda typed at the "
               "interactive prompt or made by exec() has none: define it in a file, or as a def")
    return located(SourceUnavailableError, message, where if where and where.line else None)


def lambda_definition(pyfunc):
    """``(def node, file lines, filename)``: the lambda ``pyfunc`` as a ``def`` node whose
    locations are those of the file (line 1 first)."""
    try:
        lines, _ = inspect.findsource(pyfunc)
        filename = inspect.getsourcefile(pyfunc) or pyfunc.__code__.co_filename
    except (OSError, TypeError) as exc:
        raise unavailable(pyfunc, f"its source is not available ({exc})") from None
    try:
        tree = ast.parse("".join(lines))
    except SyntaxError as exc:
        raise unavailable(pyfunc, f"its file does not parse ({exc.msg})") from None
    code = pyfunc.__code__
    on_line = [node for node in ast.walk(tree) if isinstance(node, ast.Lambda) and node.lineno == code.co_firstlineno]
    on_line.sort(key=lambda node: node.col_offset)
    node = _the_lambda(pyfunc, on_line, lines)
    name = _assigned_name(tree, node) or _line_name(code.co_firstlineno, on_line, node)
    return lambda_as_def(node, name), [line.rstrip("\n") for line in lines], filename


def lambda_as_def(node, name):
    """``def name(<the lambda's parameters>): return <its body>``, at the lambda's location."""
    body = ast.Return(value=node.body)
    ast.copy_location(body, node.body)
    definition = ast.FunctionDef(name=name, args=node.args, body=[body], decorator_list=[], returns=None,
                                 type_comment=None)
    ast.copy_location(definition, node)
    definition.end_lineno, definition.end_col_offset = node.end_lineno, node.end_col_offset
    return definition


def _the_lambda(pyfunc, candidates, lines):
    code = pyfunc.__code__
    span = _code_span(code)
    if span is not None:
        found = [node for node in candidates if _body_span(node) == span]
        if len(found) == 1:
            return found[0]
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [node for node in candidates if [a.arg for a in node.args.args + node.args.kwonlyargs] == names]
    if len(found) == 1:
        return found[0]
    line = lines[code.co_firstlineno - 1].rstrip("\n") if code.co_firstlineno <= len(lines) else ""
    where = Location(code.co_filename, code.co_firstlineno, found[0].col_offset if found else None, line)
    reason = ("there are several lambdas with these parameters on this line and adcompile cannot tell which "
              "one this is" if found else "no lambda on this line has its parameters (was the file edited?)")
    raise located(SourceUnavailableError, f"cannot compile this lambda: {reason}; define it with def (or put "
                  "it on a line of its own)", where)


def _code_span(code):
    """(first line, first column, last line, end column) of the code's instructions, or None."""
    positions = [p for p in getattr(code, "co_positions", lambda: ())()
                 if None not in p and not (p[2] == 0 and p[3] == 0)]
    if not positions:
        return None
    start = min((p[0], p[2]) for p in positions)
    end = max((p[1], p[3]) for p in positions)
    return start + end


def _body_span(node):
    body = node.body
    return body.lineno, body.col_offset, body.end_lineno, body.end_col_offset


def _assigned_name(tree, lam):
    """The name in ``name = lambda ...`` (or ``name: T = lambda ...``), else None."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and node.value is lam and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
        if isinstance(node, ast.AnnAssign) and node.value is lam and isinstance(node.target, ast.Name):
            return node.target.id
    return None


def _line_name(lineno, on_line, node):
    if len(on_line) == 1:
        return f"lambda_{lineno}"
    return f"lambda_{lineno}_{on_line.index(node) + 1}"
