"""Whether numba must check the indices of a function's code: only where the program indexes.

numba checks every integer index of an array in code compiled with ``boundscheck=True``
(adcompile's default, so that an index out of range raises ``IndexError`` as numpy does, never
reads past an array). The checks cost where code is all indexing: 1.33x on an MLP step's fused
gradient, 1.09x on the Rosenbrock gradient (``benchmarks/boundscheck.py``).

The invariant that makes dropping them legal: the element indices the lowering writes are in
range by construction. Each fused loop runs over an extent that its run-time length checks
establish for every array it indexes (or that the array's own shape gives), a slice's offset
is taken inside the view numba made of it (which clamps as numpy does), and the small vectors
it writes element by element have the length they were made with. So the only indices that may
be out of range are those the function held before the lowering: a user's ``x[i]`` or
``W[idx]``, an index a transform derived from one (its adjoint's ``bx[i] += ...``), and
the tapes' stores and reads. :func:`needs_bounds_checks` looks for them in that IR, so code that
has none (array code, however much the lowering fuses it) compiles without checks, and code
that has any keeps them everywhere. Its generated header says which (``api/specialised.py``),
so checked and unchecked machine code never share a cache file. (``np.add.at``, like every
runtime helper, is compiled apart and checks its own indices.)
"""
from ..ir.nodes import Assign, SetItem, walk

_ELEMENT_ITEMS = ("int", "array")  # index items that pick elements (slices and None cannot fail)


def needs_bounds_checks(fn_ir):
    """Whether ``fn_ir`` (IR before the lowering) indexes an array with an integer or an
    integer array anywhere, custom Functions' bodies included."""
    for stmt in walk(fn_ir.body):
        if isinstance(stmt, SetItem):  # AccumItem too
            if any(item[0] in _ELEMENT_ITEMS for item in stmt.items):
                return True
        elif isinstance(stmt, Assign):
            if stmt.prim == "getitem" and any(item[0] in _ELEMENT_ITEMS for item in stmt.params["items"]):
                return True
    return False
