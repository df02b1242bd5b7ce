"""Long generated lines broken near ``WIDTH`` columns, continuation lines indented under their statement.

The code generator writes every statement as one logical line and hands it here with its
indentation. A line that fits is kept. A longer one is broken inside brackets (Python joins
the lines of an open bracket), after a comma or before a binary operator, filling each line
as far as it fits. A continuation line is indented one level (4 spaces) per bracket open at
its start, counted from the statement's own indentation, and one level more after a block
header (``if``, ``for``, ``while``, ``def``), whose body is one level in::

    if (X.shape[0] == _n_18 and W2.shape[1] == _n_22 and y.shape[0] == _n_18
            and y.shape[1] == _n_22):
        bW1 = rt.matmul(rt.unbroadcast(bh * (1.0 - h * h), _t),
            X.T)

A value with an operator outside any bracket (``a = b * c + ...``, the test of an ``if``) is
put in parentheses first, so that it can break too. Breaking adds only those parentheses and
whitespace inside brackets: the wrapped statement parses to the same AST as the unbroken one.
Comments are not broken (a ``# grad of:`` comment quotes the user's line as written).
"""
import io
import tokenize

WIDTH = 100
LEVEL = "    "

_OPEN, _CLOSE = "([{", ")]}"
# how loosely each operator binds: a line breaks preferably before the loosest (after a comma: 0)
_BINARY = {"or": 0, "and": 1, "<": 2, ">": 2, "<=": 2, ">=": 2, "==": 2, "!=": 2, "+": 3, "-": 3,
           "*": 4, "/": 4, "//": 4, "%": 4, "@": 4}
_AFTER_OPEN = 5
_HEADERS = ("if ", "elif ", "while ", "for ", "def ")
_VALUE_KEYWORDS = ("return ", "if ", "elif ", "while ")
_ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "//=", "%=", "@=", "**="}
_KEYWORDS = {"and", "or", "not", "in", "is", "if", "else", "return", "while", "for", "elif", "lambda"}


def wrap_line(indent, text, width=None):
    """The physical lines of the statement ``text`` written at indentation ``indent`` (a
    string of spaces): ``[indent + text]`` if it fits in ``width`` columns (default ``WIDTH``),
    else its broken lines."""
    width = WIDTH if width is None else width
    if len(indent) + len(text) <= width or text.startswith("#"):
        return [indent + text]
    text = _parenthesized_value(text)
    tokens = _tokens(text)
    if tokens is None:
        return [indent + text]
    breaks = _break_points(tokens)
    extra = 1 if text.startswith(_HEADERS) else 0
    lines, start, prefix = [], 0, indent
    while len(prefix) + len(text) - start > width:
        cut = _best_break(text, start, breaks, width - len(prefix))
        if cut is None:
            break
        lines.append(prefix + text[start:cut].rstrip())
        start = cut
        prefix = indent + LEVEL * (breaks[cut][0] + extra)
    lines.append(prefix + text[start:])
    return lines


def _best_break(text, start, breaks, room):
    """Where the line starting at column ``start`` of ``text`` ends, given ``room`` columns: at
    the loosest place (least deep, loosest operator) that leaves the line at least a third full,
    the last such; a line that cannot fit ends at its first break (None: no break left)."""
    later = [position for position in breaks if position > start]
    if not later:
        return None
    fitting = [p for p in later if len(text[start:p].rstrip()) <= room]
    if not fitting:
        return later[0]
    full_enough = [p for p in fitting if len(text[start:p].rstrip()) >= room // 3] or fitting
    return min(reversed(full_enough), key=lambda p: breaks[p])


def _tokens(text):
    """``[(type, string, start column, end column)]`` of the one-line ``text`` (None if it
    does not tokenize: then it is left as it is)."""
    try:
        found = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    return [(t.type, t.string, t.start[1], t.end[1]) for t in found
            if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER) and t.start[0] == 1]


def _is_operand_end(token):
    kind, string = token[0], token[1]
    return (kind in (tokenize.NUMBER, tokenize.STRING) or string in _CLOSE
            or (kind == tokenize.NAME and string not in _KEYWORDS))


def _break_points(tokens):
    """``{column: (bracket depth there, looseness)}`` of the places a line may break: after an
    opening bracket or a comma, and before a binary operator, inside brackets."""
    breaks, depth = {}, 0
    for k, token in enumerate(tokens):
        string = token[1]
        following = tokens[k + 1] if k + 1 < len(tokens) else None
        if string in _CLOSE:
            depth -= 1
        if depth > 0 and string in _BINARY and k > 0 and _is_operand_end(tokens[k - 1]) \
                and token[0] in (tokenize.OP, tokenize.NAME):
            breaks[token[2]] = (depth, _BINARY[string])
        if string in _OPEN:
            depth += 1
            if following is not None and following[1] not in _CLOSE:
                breaks[following[2]] = (depth, _AFTER_OPEN)
        elif string == "," and depth > 0 and following is not None and following[1] not in _CLOSE:
            breaks[following[2]] = (depth, 0)
    return breaks


def _parenthesized_value(text):
    """``text`` with its value (what follows ``=``/``return``, the test of an ``if``) in
    parentheses when an operator or comma outside every bracket would otherwise keep it on one line."""
    tokens = _tokens(text)
    if tokens is None:
        return text
    start = None
    if text.startswith(_VALUE_KEYWORDS):
        start = 1
    else:
        depth = 0
        for k, token in enumerate(tokens):
            depth += token[1] in _OPEN
            depth -= token[1] in _CLOSE
            if depth == 0 and token[0] == tokenize.OP and token[1] in _ASSIGNMENTS:
                start = k + 1
                break
    if start is None or start >= len(tokens):
        return text
    end = len(tokens) - 1 if tokens[-1][1] == ":" else len(tokens)
    value = tokens[start:end]
    depth, top_level = 0, False
    for k, token in enumerate(value):
        if token[1] in _CLOSE:
            depth -= 1
        if depth == 0 and (token[1] == "," or (token[1] in _BINARY and k > 0 and _is_operand_end(value[k - 1]))):
            top_level = True
        if token[1] in _OPEN:
            depth += 1
    if not top_level:
        return text
    first, last = value[0][2], value[-1][3]
    return text[:first] + "(" + text[first:last] + ")" + text[last:]
