"""Arguments that a compiled function writes into must be writeable: checked at the call.

numpy raises ``ValueError: assignment destination is read-only`` when code writes into an
array whose ``writeable`` flag is off (``x.setflags(write=False)``, ``np.broadcast_to``, a
read-only memory map). numba types such an array as read-only and refuses to compile the
write, and derivatives write into a copy of a written argument; so the check is made in one
place, before the generated code runs, the same on every backend and tier for the function
and every function derived from it (its gradient is not defined where it raises): each
argument that the user's function may write into, through itself or a view of it, must be a
writeable array. The write need not run on these arguments (it may be in a branch): a
function that may write into an argument asks for a writeable one, as numba does. Functions
writing into no argument pay nothing.
"""
import numpy as np

from ..errors import ReadOnlyArgumentError
from ..ir.memory import memory_roots
from ..ir.nodes import SetItem, walk
from ..transforms.arguments import written_arguments as arguments_written_in_place


def written_arguments(fn_ir, n_args):
    """(position, name, Location of the first write) of each of the first ``n_args``
    parameters of ``fn_ir`` that it writes into (``transforms/arguments.py`` decides which:
    the arguments its derivatives copy), in parameter order."""
    written = set(arguments_written_in_place(fn_ir))
    roots = memory_roots(fn_ir.body, fn_ir.params)
    first_write = {}
    for stmt in walk(fn_ir.body):
        if isinstance(stmt, SetItem):
            for root in roots.get(stmt.array, {stmt.array}):
                first_write.setdefault(root, stmt.loc)
    return tuple((k, param.name, first_write.get(param)) for k, param in enumerate(fn_ir.params[:n_args])
                 if param in written)


def read_only_error(name, writer, param, location):
    """The error of a call of ``name`` (``grad(f)``...) whose user function ``writer`` writes
    into its argument ``param`` at ``location``."""
    caller = "" if name == writer else f"{name}: "
    where = f"\n{location.describe()}" if location is not None else ""
    return ReadOnlyArgumentError(
        f"assignment destination is read-only: {caller}{writer} writes into its argument '{param}', "
        f"and the array passed is read-only (pass a writeable array, e.g. {param}.copy()){where}")


def checking_written_arguments(compiled, primal, n_args, name):
    """``compiled``, or a callable raising ``read_only_error`` before calling it when one of
    the first ``n_args`` arguments that the user's function ``primal`` (its IR) may write into
    is a read-only array."""
    written = written_arguments(primal, n_args)
    if not written:
        return compiled
    writer = primal.name

    def call(*args):
        for k, param, location in written:
            value = args[k]
            if isinstance(value, np.ndarray) and not value.flags.writeable:
                raise read_only_error(name, writer, param, location)
        return compiled(*args)

    return call
