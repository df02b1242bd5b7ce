"""A compact text form of the IR, for debugging (``ADCOMPILE_DEBUG=ir``).

Statements are told apart by class name, not ``isinstance``: ``ir/nodes.py`` uses this module
for ``Function.__repr__``, and this module must not import it back.
"""


def format_block(block, indent=1):
    lines = []
    pad = "  " * indent
    for stmt in block:
        kind = type(stmt).__name__
        if kind == "If":
            lines.append(f"{pad}if {stmt.cond!r}:")
            lines += format_block(stmt.body, indent + 1)
            lines.append(f"{pad}else:")
            lines += format_block(stmt.orelse, indent + 1)
        elif kind == "For":
            lines.append(f"{pad}for {stmt.index!r} in range({stmt.start!r}, {stmt.stop!r}, {stmt.step!r}):")
            lines += format_block(stmt.body, indent + 1)
        elif kind == "While":
            lines.append(f"{pad}while:")
            lines += format_block(stmt.cond_body, indent + 2)
            lines.append(f"{pad}  test {stmt.cond!r}")
            lines += format_block(stmt.body, indent + 1)
        else:
            lines.append(pad + repr(stmt))
    return lines


def format_function(fn):
    head = f"def {fn.name}({', '.join(map(repr, fn.params))}):"
    return "\n".join([head] + format_block(fn.body) + [f"  return {fn.results!r}"])
