"""Which user line each line of a generated function comes from.

IR statements carry ``.loc``, the ``errors.Location`` of the user's line they were built from.
The code generator writes one or more lines per statement; re-running it with a writer that
notes the location in effect at each emitted line gives the map. It is built only when an
error needs it (never on the fast path), from the same IR the source was generated from, so
the lines correspond one to one:

    generated line 12  ``bz += bw * 2.0``  ->  user line ``w = z * 2.0`` (file, line 7)

A statement without a location (an adjoint initialisation, a tape allocation) inherits the
location of the statement that encloses it, if any. The code generator folds single-use
temporaries into the expression that reads them, possibly on a later line (a ``return``, an
``if`` test) or writes them out later (``_t = x[i]`` just before the write that needs it):
such lines take the location of the statement the temporary was built from.
"""
from ..codegen.python import FunctionWriter
from ..ir.nodes import Assign


class _LocatingWriter(FunctionWriter):
    """The code generator's writer, noting the user location of every line it emits."""

    def __init__(self, fn):
        super().__init__(fn)
        self.line_locations = []
        self._location = None
        self._temporary_origins = {}  # name of a folded temporary -> location it was built at
        self._folded_in = []          # locations of temporaries folded into the next line

    def statement(self, stmt, indent, pending):
        enclosing = self._location
        self._location = getattr(stmt, "loc", None) or enclosing
        if isinstance(stmt, Assign) and self.inlinable(stmt):
            self._temporary_origins[stmt.target.name] = self._location
        try:
            super().statement(stmt, indent, pending)
        finally:
            self._location = enclosing

    def atom(self, atom, pending):
        if atom in pending:
            self._folded_in.append(self._temporary_origins.get(atom.name))
        return super().atom(atom, pending)

    def emit(self, indent, text):
        first = len(self.lines)
        super().emit(indent, text)
        target = text.strip().split(" = ", 1)[0] if " = " in text else None
        location = self._temporary_origins.get(target) if target else None
        if location is None:
            location = self._location
        if location is None:
            location = next((loc for loc in self._folded_in if loc is not None), None)
        self._folded_in = []
        # a long statement is broken over several lines: each of them is this location
        self.line_locations.extend([location] * (len(self.lines) - first))


def line_locations(fn_ir, source):
    """``{line number in source: Location}`` for the function ``fn_ir`` generated as ``source``
    (empty if the source does not have the expected layout)."""
    writer = _LocatingWriter(fn_ir)
    try:
        writer.function(fn_ir.name)
    except Exception:  # the map is a diagnostic aid: never let it hide the original error
        return {}
    source_lines = source.splitlines()
    header = f"def {fn_ir.name}("
    starts = [k for k, line in enumerate(source_lines) if line.startswith(header)]
    if len(starts) != 1 or len(source_lines) - starts[0] < len(writer.line_locations):
        return {}
    first = starts[0] + 1  # line numbers count from 1
    return {first + k: loc for k, loc in enumerate(writer.line_locations) if loc is not None}
