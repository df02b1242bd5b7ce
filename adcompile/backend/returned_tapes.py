"""Tapes that go back into numba code.

A pullback's forward half returns the tapes its backward half pops (``pullback_split.py``).
numba returns a list its code made as a Python list, and cannot always take it back: its
typing reads a list's type from its first element, so an empty list has none, and a tape of
arrays may hold views of another layout (``w[::-1]`` next to contiguous arrays), which numba
will not unbox as one list. Such a tape (only such a one: building a typed List costs a call per
element) goes back as a numba typed List of the element type the backward pops, arrays in any
layout (``tape.pop()`` works on either kind of list).
"""
import numpy as np

from ..ir.nodes import Pop, walk
from ..ir.types import NUMPY_NAME


def _not_unboxable(tape):
    """Whether numba cannot take ``tape`` back as a list: it is empty, or its arrays are not all
    C-contiguous (numba types a list by its first element and would meet another layout)."""
    return not tape or (isinstance(tape[0], np.ndarray) and not all(item.flags.c_contiguous for item in tape))


def tapes_for_numba(values, params, fn_ir):
    """``values`` (passed for ``params`` of ``fn_ir``) with each list that numba could not
    take back replaced by a typed List of the element type ``fn_ir`` pops from it."""
    if not any(isinstance(value, list) and _not_unboxable(value) for value in values):
        return values
    from numba import from_dtype, typed, types  # lazy: numba only; the Python backend takes any list
    popped = {stmt.tape: stmt.target.type for stmt in walk(fn_ir.body) if isinstance(stmt, Pop)}
    result = []
    for value, param in zip(values, params):
        element = popped.get(param)
        if isinstance(value, list) and element is not None and _not_unboxable(value):
            scalar = from_dtype(np.dtype(NUMPY_NAME[element.dtype]))
            tape = typed.List.empty_list(types.Array(scalar, element.ndim, "A") if element.ndim else scalar)
            for item in value:  # one by one: extend would unbox the list as one type
                tape.append(item)
            value = tape
        result.append(value)
    return tuple(result)
