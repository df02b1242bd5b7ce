"""A long generated function split into parts, each a function of its own for LLVM.

LLVM's optimisation of one function grows faster than linearly with its size (SROA and
instruction combining over every value of a 1,700-line gradient), so a 40-layer ``Sequential``'s
gradient took 92 CPU-seconds where 10 layers took 14. Cut into parts of bounded size, the same
code compiles in time linear in its length.

The cut is made on the generated source, at the function's top-level statements: a run of
statements of about ``PART_LINES`` lines becomes ``def <name>_part_<k>(<live in>): ... return
(<live out>,)`` and the function calls it, ``<live out>, = <name>_part_<k>(<live in>)``. Its
live in are the names it reads that the function's parameters or earlier statements may have
bound; its live out the names it binds that later statements (or the return) read. Arrays and
tapes are passed by reference, so writes into them are seen as in one function. The split is a
pure function of the source (names sorted), so the same program gives the same bytes.

Only the numba backend runs split code (``api/specialised.py``); the Python it replaces is the
same statements, in order. numba compiles the parts inside the function that calls them
(``backend/subroutines.py``): separate LLVM functions of one library, turned into machine code
once.
"""
import ast

PART_LINES = 250  # a function longer than twice this is split into parts of about this length
PART_MARK = "_part_"


def _names(nodes, ctx):
    return {node.id for stmt in nodes for node in ast.walk(stmt)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ctx)}


def _exposed(stmts):
    """(names a run of statements may read before it binds them, names it surely binds)."""
    exposed, bound = set(), set()
    for stmt in stmts:
        reads, binds = _exposed_statement(stmt)
        exposed |= reads - bound
        bound |= binds
    return exposed, bound


def _exposed_statement(stmt):
    if isinstance(stmt, ast.For):  # the target is bound before the body runs; the body may not run
        body_reads, _ = _exposed(stmt.body)
        return _names([stmt.iter], ast.Load) | (body_reads - _names([stmt.target], ast.Store)), set()
    if isinstance(stmt, ast.While):
        return _names([stmt.test], ast.Load) | _exposed(stmt.body)[0], set()
    if isinstance(stmt, ast.If):
        (body_reads, body_binds), (else_reads, else_binds) = _exposed(stmt.body), _exposed(stmt.orelse)
        if _raises(stmt.orelse):  # a fused loop's deferred fallback: only the loop continues
            else_binds = body_binds
        return _names([stmt.test], ast.Load) | body_reads | else_reads, body_binds & else_binds
    reads = _names([stmt], ast.Load)
    augmented = [node.target.id for node in ast.walk(stmt)
                 if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)]
    return reads | set(augmented), _names([stmt], ast.Store)  # ``x += y`` reads x (its Name is a Store)


def _raises(stmts):
    """Whether the block ends the call with ``raise`` (a deferred fallback among others)."""
    return bool(stmts) and isinstance(stmts[-1], ast.Raise)


def _lines(stmt):
    return stmt.end_lineno - stmt.lineno + 1


def _segments(body, part_lines):
    """Runs of top-level statements (index ranges), the last statement (the return) kept out."""
    segments, start, size = [], 0, 0
    for k, stmt in enumerate(body[:-1]):
        size += _lines(stmt)
        if size >= part_lines:
            segments.append((start, k + 1))
            start, size = k + 1, 0
    if start < len(body) - 1:
        if segments and size < part_lines // 2:  # a short rest joins the last part
            segments[-1] = (segments[-1][0], len(body) - 1)
        else:
            segments.append((start, len(body) - 1))
    return segments


def split_long_function(source, name, part_lines=PART_LINES):
    """``source`` with its function ``name`` cut into parts if it is longer than
    ``2 * part_lines`` lines; else ``source`` itself. The parts' lines are the function's,
    comments included."""
    module = ast.parse(source)
    fn = next((node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == name), None)
    if fn is None or _lines(fn) <= 2 * part_lines or not isinstance(fn.body[-1], ast.Return):
        return source
    lines = source.splitlines()
    body = fn.body
    bound = {arg.arg for arg in fn.args.args}
    parts, calls = [], []
    header_end = max([fn.lineno] + [arg.end_lineno for arg in fn.args.args])  # the ``def`` line(s)
    first_line = header_end + 1  # comments before the first statement are the first part's
    for k, (start, stop) in enumerate(_segments(body, part_lines)):
        segment, after = body[start:stop], body[stop:]
        reads, surely_binds = _exposed(segment)
        stored = _names(segment, ast.Store)
        live_out = stored & _exposed(after)[0]
        # a name the part may leave unbound keeps the value it had: passed in too
        live_in = sorted((reads | (live_out - surely_binds)) & bound)
        live_out = sorted(live_out)
        part = f"{name}{PART_MARK}{k}"
        text = lines[first_line - 1:segment[-1].end_lineno]
        first_line = segment[-1].end_lineno + 1
        parts += [f"def {part}({', '.join(live_in)}):", *text, f"    return {_tuple(live_out)}", "", ""]
        call = f"{part}({', '.join(live_in)})"
        calls.append(f"    {_tuple(live_out)} = {call}" if live_out else f"    {call}")
        bound |= stored
    head = lines[:fn.lineno - 1]
    tail = lines[first_line - 1:]
    return "\n".join(head + parts + lines[fn.lineno - 1:header_end] + calls + tail) + "\n"


def _tuple(names):
    return f"{names[0]}," if len(names) == 1 else ", ".join(names) if names else "None"
