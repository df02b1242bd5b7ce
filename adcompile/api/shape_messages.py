"""Shape errors told in the user's terms: which operator of theirs, which operands, which axes.

When compiled code fails because operands do not fit together (numpy's
``gufunc signature (n?,k),(k,m?)->(n?,m?)``, ``operands could not be broadcast together``),
the generated line it failed on says little to the user. ``user_shape_failure`` runs the
user's own Python function on copies of the arguments instead (compiled code has no side
effects, and the function is ordinary numpy code): it fails on the same operation, and its
traceback gives the frame, the local values and, through the instruction's source span
(Python 3.11's ``co_positions``), the failing expression. That expression is described by the
operands' source text and shapes, with the caret on the operator:

    matmul (@): A has shape (3, 4) and B has shape (5, 2): A's last axis (4) must equal B's
    first axis (5)
      File "model.py", line 5, column 21
        return np.sum(A @ B)
                        ^

The operators told this way are the binary ones (``+ - * / // % ** @``, comparisons), their
in-place forms (``a += b``), two-argument numpy ufuncs (``np.add``, ``np.maximum``, ...),
``np.where`` and ``np.dot``/``np.matmul``; any other failing call keeps numpy's message, at
the user's expression.
"""
import ast
import itertools
import linecache
import os

import numpy as np

from ..errors import AdCompileError, Location

_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
           ast.Mod: "%", ast.Pow: "**", ast.MatMult: "@", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
           ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_CONTRACTING = (np.matmul, np.dot)
_LIBRARY_FOLDERS = (os.path.dirname(np.__file__) + os.sep,
                    os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep)  # numpy, adcompile
_LONGEST_OPERAND_TEXT = 30


def user_shape_failure(pyfunc, args):
    """``message + located source line`` of the user's operation that fails running ``pyfunc``
    on copies of ``args``, or None when it does not fail with a ValueError (then the compiled
    code's failure is not the user's to explain this way)."""
    copies = [value.copy() if isinstance(value, np.ndarray) else value for value in args]
    try:
        with np.errstate(all="ignore"):
            pyfunc(*copies)
    except AdCompileError:
        return None  # a compiled function called inside: its own error is already told
    except ValueError as error:
        return _told(error)
    except Exception:
        return None
    return None


def _told(error):
    found = _user_frame(error.__traceback__)
    if found is None:
        return None
    frame, lasti, lineno = found
    filename = frame.f_code.co_filename
    text = "".join(linecache.getlines(filename))
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    span = _instruction_span(frame.f_code, lasti)
    for node in _candidates(tree, span, lineno):
        told = _describe(node, frame, text)
        if told is not None:
            message, (op_line, op_col) = told
            return f"{message}\n{_location(filename, op_line, op_col).describe()}"
    start = (span[0], span[2]) if span and span[0] == lineno and span[2] is not None else (lineno, None)
    numpy_words = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"{numpy_words}\n{_location(filename, *start).describe()}"


def _user_frame(tb):
    """(frame, last instruction, line) of the innermost traceback entry outside numpy and
    adcompile: the user's code."""
    found = None
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if not filename.startswith(_LIBRARY_FOLDERS) and not filename.startswith("<"):
            found = (tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _instruction_span(code, lasti):
    """(line, end line, column, end column) of the instruction at ``lasti``, where Python keeps it."""
    if lasti < 0 or not hasattr(code, "co_positions"):
        return None
    return next(itertools.islice(code.co_positions(), lasti // 2, None), None)


def _candidates(tree, span, lineno):
    """The expressions that may have failed: the one the instruction's span names first, then
    the operations of the statement at ``lineno``, innermost first (the order Python runs them)."""
    statement = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= node.end_lineno:
            statement = node  # the innermost statement (walk goes outside in)
    if statement is None:
        return []
    # of a compound statement (if, while, for), only the header: its body has lines of its own
    headers = [getattr(statement, field) for field in ("test", "iter") if hasattr(statement, field)]
    roots = headers if hasattr(statement, "body") else [statement]
    ordered = [node for root in roots for node in _post_order(root)]
    named = [node for node in ordered if span and _span(node) == tuple(span)]
    return named + [node for node in ordered if node not in named]


def _post_order(node):
    for child in ast.iter_child_nodes(node):
        yield from _post_order(child)
    yield node


def _span(node):
    return (getattr(node, "lineno", None), getattr(node, "end_lineno", None),
            getattr(node, "col_offset", None), getattr(node, "end_col_offset", None))


def _describe(node, frame, text):
    """(message, operator position) when ``node`` is an operation whose operands, evaluated in
    ``frame``, do not fit together; None otherwise."""
    if isinstance(node, ast.BinOp):
        symbol, operands = _BINARY.get(type(node.op)), [node.left, node.right]
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        symbol, operands = _BINARY.get(type(node.ops[0])), [node.left, node.comparators[0]]
    elif isinstance(node, ast.AugAssign):
        symbol, operands = _BINARY.get(type(node.op)), [node.target, node.value]
        symbol = symbol and symbol + "="
    elif isinstance(node, ast.Call) and len(node.args) >= 2 and not node.keywords:
        return _describe_call(node, frame, text)
    else:
        return None
    if symbol is None:
        return None
    values = _values(operands, frame, text)
    if values is None:
        return None
    names = _names(operands, text, ("the left operand", "the right operand"))
    position = _operator_position(text, operands[0], operands[1])
    if symbol.startswith("@"):
        problem = _contraction_problem(values, names, batched=True)
        what = f"matmul ({symbol})"
    else:
        problem = _broadcast_problem(values, names, symbol if isinstance(node, ast.AugAssign) else None)
        what = symbol
    return (f"{what}: {problem}", position) if problem else None


def _describe_call(node, frame, text):
    try:
        function = eval(compile(ast.Expression(node.func), "<operation>", "eval"), frame.f_globals, frame.f_locals)
    except Exception:
        return None
    ordinal = ("the first argument", "the second argument", "the third argument")
    if any(function is contracting for contracting in _CONTRACTING) and len(node.args) == 2:
        def check(values, names):
            return _contraction_problem(values, names, batched=function is np.matmul)
    elif isinstance(function, np.ufunc) and function.nin == 2 and len(node.args) == 2 or \
            function is np.where and len(node.args) == 3:
        check = _broadcast_problem
    else:
        return None
    values = _values(node.args, frame, text)
    if values is None:
        return None
    problem = check(values, _names(node.args, text, ordinal))
    name = ast.get_source_segment(text, node.func) or "the call"
    return (f"{name}: {problem}", (node.lineno, node.col_offset)) if problem else None


def _values(operands, frame, text):
    """The operands' values, evaluated again in the failing frame (they were computed without
    error just before the operation failed), or None."""
    values = []
    for operand in operands:
        segment = ast.get_source_segment(text, operand)
        if segment is None:
            return None
        try:
            values.append(eval(f"({segment})", frame.f_globals, frame.f_locals))
        except Exception:
            return None
    return values


def _names(operands, text, fallbacks):
    names = []
    for operand, fallback in zip(operands, fallbacks):
        segment = ast.get_source_segment(text, operand) or ""
        short = "\n" not in segment and 0 < len(segment) <= _LONGEST_OPERAND_TEXT
        names.append(segment if short else fallback)
    return names


def _shape(value):
    return tuple(np.shape(value))


def _broadcast_problem(values, names, in_place=None):
    """What is wrong with broadcasting ``values`` together (and, for an ``in_place`` operator
    such as ``+=``, with writing the result into the first), or None."""
    shapes = [_shape(value) for value in values]
    described = " and ".join(f"{name} has shape {shape}" for name, shape in zip(names, shapes))
    try:
        result = np.broadcast_shapes(*shapes)
    except ValueError:
        return f"{described}, which do not broadcast: {_mismatched_axis(shapes, names)}"
    if in_place and result != shapes[0]:
        return (f"{described}: the result has shape {result}, which does not fit into {names[0]} "
                f"(an in-place {in_place} cannot change its target's shape: write "
                f"{names[0]} = {names[0]} {in_place[:-1]} {names[1]} for a new array)")
    return None


def _mismatched_axis(shapes, names):
    """Which axis (counted from the end, as numpy aligns them) has sizes that differ."""
    for axis in range(1, max(map(len, shapes)) + 1):
        sizes = [(name, shape[-axis]) for name, shape in zip(names, shapes) if len(shape) >= axis]
        distinct = {size for _, size in sizes if size != 1}
        if len(distinct) > 1:
            pairs = " and ".join(f"{size} in {name}" for name, size in sizes)
            return (f"axis -{axis} has size {pairs}; numpy matches shapes from the last axis, and "
                    f"each pair of sizes must be equal or one of them 1")
    return "numpy matches shapes from the last axis, and each pair of sizes must be equal or one of them 1"


def _contraction_problem(values, names, batched):
    (a, b), (a_name, b_name) = [_shape(value) for value in values], names
    described = f"{a_name} has shape {a} and {b_name} has shape {b}"
    scalar = next((name for name, shape in zip(names, (a, b)) if shape == ()), None)
    if scalar is not None:
        return f"{described}: matmul needs arrays, and {scalar} is a scalar (use * to multiply by a number)"
    b_axis, b_words = (0, "first") if len(b) <= 2 else (-2, "second-to-last")
    if a[-1] != b[b_axis]:
        a_words = "last" if len(a) > 1 else "only"
        b_words = "only" if len(b) == 1 else b_words
        return (f"{described}: {a_name}'s {a_words} axis ({a[-1]}) must equal {b_name}'s {b_words} "
                f"axis ({b[b_axis]})")
    if batched and len(a) > 2 and len(b) > 2:
        try:
            np.broadcast_shapes(a[:-2], b[:-2])
        except ValueError:
            return f"{described}: their leading (batch) axes {a[:-2]} and {b[:-2]} do not broadcast"
    return None


def _operator_position(text, left, right):
    """(line, column) of the operator between ``left`` and ``right``: the first character after
    ``left`` (and its closing parentheses) that is not blank."""
    lines = text.splitlines()
    line, col = left.end_lineno, left.end_col_offset
    while (line, col) < (right.lineno, right.col_offset) and line <= len(lines):
        row = lines[line - 1]
        if col >= len(row):
            line, col = line + 1, 0
        elif row[col] in " \t)\\":
            col += 1
        else:
            return line, col
    return left.lineno, left.col_offset


def _location(filename, line, col):
    return Location(filename, line, col, linecache.getline(filename, line).rstrip("\n"))
