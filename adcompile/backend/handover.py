"""The Python tier of a function with loops: it hands a call over to numba's machine code once
that is ready.

A generated function with loops may run far longer as Python than numba takes to compile it
(a loop of a million scalar steps), or far shorter (the loop-form GMM gradient: 5 ms as Python,
8-14 CPU-seconds to compile). So its Python tier checks, at every iteration of every loop,
whether the machine code is ready; if it is, the Python run stops (``MachineCodeReady``) and the
same call runs as machine code (``tiers.py``). The check is the loop's iterable wrapped,
``for i in _adcompile_each(range(n)):``, and ``while _adcompile_going() and (cond):``, written on
the loop's own line, so that every line of the tier's source is where it is in the source shown
to users, and errors point to the same lines.

What makes abandoning a run legal: the run that stopped leaves nothing the caller can see.
Generated code has two kinds of effect (``lowering/deferred_fallbacks.py``:
``argument_effects``): writes into memory an argument may view, and pushes onto or pops from a
tape it was given. The caller (``api/specialised.py``) hands over only code that touches no
given tape; the arrays it may write into are copied before each Python-tier run
(``WrittenArguments``) and written back when the run stops, so the machine code runs the call on
the arguments as they came (an optimizer step, a training epoch that updates parameters in
place: the copies are of the parameters and the optimizer's state, taken only while numba
compiles).
"""
import ast

import numpy as np

EACH, GOING = "_adcompile_each", "_adcompile_going"


class MachineCodeReady(Exception):
    """Raised in a Python-tier run of a function with loops when numba's code for it is ready."""


def with_handover_checks(source, name):
    """``source`` with the loops of its function ``name`` checking for machine code (above)."""
    function = next(node for node in ast.parse(source).body
                    if isinstance(node, ast.FunctionDef) and node.name == name)
    insertions = []  # (line, byte column, text)
    for node in ast.walk(function):
        if isinstance(node, ast.For):
            around = node.iter
            insertions += [(around.lineno, around.col_offset, f"{EACH}("),
                           (around.end_lineno, around.end_col_offset, ")")]
        elif isinstance(node, ast.While):
            around = node.test
            insertions += [(around.lineno, around.col_offset, f"{GOING}() and ("),
                           (around.end_lineno, around.end_col_offset, ")")]
    lines = source.splitlines(keepends=True)
    for line, column, text in sorted(insertions, reverse=True):
        encoded = lines[line - 1].encode()  # ast's columns count UTF-8 bytes
        lines[line - 1] = (encoded[:column] + text.encode() + encoded[column:]).decode()
    return "".join(lines)


def install_checks(module_globals, machine_code_ready):
    """Give a module loaded from ``with_handover_checks``'s source its two checks, which raise
    ``MachineCodeReady`` once ``machine_code_ready()`` is true."""

    def going():
        if machine_code_ready():
            raise MachineCodeReady()
        return True

    def each(iterable):
        for item in iterable:
            if machine_code_ready():
                raise MachineCodeReady()
            yield item

    module_globals[EACH], module_globals[GOING] = each, going


class WrittenArguments:
    """The arguments a function may write into (their positions): ``saved(args)`` copies them,
    and ``restore`` of what it returned writes the copies back."""

    def __init__(self, positions):
        self.positions = tuple(positions)

    def saved(self, args):
        return [(args[k], args[k].copy()) for k in self.positions if isinstance(args[k], np.ndarray)]

    @staticmethod
    def restore(saved):
        for array, copy in saved:  # arguments sharing memory were copied from the same values
            array[...] = copy
