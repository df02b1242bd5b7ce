"""Exceptions raised while running (or numba-compiling) generated code, told in the user's terms.

Called by the API only when a call of generated code raised (the fast path pays nothing):

* numba rejected the generated code (a ``TypingError`` at the first call): that is
  adcompile's bug, not the user's. It becomes ``GeneratedCodeError``, naming the user line
  the failing generated statement came from and asking for a report; numba's own text stays
  attached as the cause.
* the code failed on these arguments, e.g. operands that do not broadcast: a ``ValueError``
  becomes ``ShapeError`` (also a ``ValueError``) told in the user's terms where their own Python
  function fails the same way (``shape_messages.py``: the operator, its operands' shapes, the
  caret on the operator), else naming the user's line and the generated one. With numba there
  is no Python frame to read the line from, so the generated Python is re-run on copies of the
  arguments to find it. Other exceptions (``ZeroDivisionError`` on Python floats, an
  ``IndexError`` out of bounds, a ``ValueError`` that is not about shapes such as ``int(nan)``
  or a math domain error) are what the user's own Python would raise: they keep their type
  and get a note (shown under the traceback) naming the user's line and the generated one. An
  index out of range that numba's bounds check caught gets numpy's words from the re-run
  (``index 10 is out of bounds for axis 0 with size 5``).
"""
import re
import sys
import traceback

import numpy as np

from ..backend.unfused_fallback import code_that_raised
from ..errors import AdCompileError, GeneratedCodeError, ShapeError
from ..boundary import LOCATED_MARK
from .shape_messages import user_shape_failure
from .source_lines import line_locations


def explain_failure(error, target, sig, call_args):
    """The exception to raise instead of ``error`` (or ``error`` itself, with a note added).

    ``target`` is the ``_Specialised`` whose generated code was called with ``call_args``
    (arguments, hidden values and extras) for the signature ``sig``."""
    if isinstance(error, AdCompileError):
        return error
    try:
        fn_ir, source, compiled = target.specialization(sig)
    except Exception:
        return error
    compiled = code_that_raised(compiled, error)  # the unfused code, where fused loops deferred to it
    python_fn = getattr(compiled, "py_func", compiled)
    generated_file = python_fn.__code__.co_filename
    fn_ir, source = _code_that_ran(target, sig, fn_ir, source, generated_file)
    if _is_numba_error(error):
        line = _numba_error_line(error, generated_file)
        return _compile_failure(error, target, fn_ir, source, generated_file, line)
    line, message = _failing_line(error.__traceback__, generated_file), _first_line(error)
    if line is None and python_fn is not compiled:
        line, rerun_error = _python_rerun(python_fn, call_args, generated_file)
        if rerun_error is not None and type(rerun_error) is type(error):
            message = _first_line(rerun_error)  # numpy's words are clearer than numba's
    where = _describe_origin(fn_ir, source, generated_file, line)
    if isinstance(error, ValueError) and _is_about_shapes(message):
        user_call = target.user_python_call(call_args)
        told = user_shape_failure(*user_call) if user_call is not None else None
        if told is None:  # the user's Python does not fail so: the generated line is what we know
            told = f"{_without_gufunc_words(message)}\n{where}".rstrip()
        return ShapeError(f"{target.name}: {told}")
    if type(error) is IndexError and message != _first_line(error):
        error = IndexError(message)  # numba's bounds check does not say which index, nor the length
    if where and hasattr(error, "add_note"):
        error.add_note(f"adcompile: raised by the generated code for {target.name}\n{where}")
        setattr(error, LOCATED_MARK, True)  # told at the user's line: the API shows it without our frames
    return error


def _code_that_ran(target, sig, fn_ir, source, generated_file):
    """(IR, source) of the generated file that ran: the source shown to users, generated from
    the IR with loops fused for numba, or (a tiered first call) the unfused Python of ``fn_ir``."""
    try:
        with open(generated_file) as file:
            text = file.read()
    except OSError:
        text = source
    if text == source:
        return target.lowered_ir(sig), source
    return fn_ir, text


# Words of numpy's and numba's messages about operands whose shapes do not fit together.
_SHAPE_WORDS = re.compile(r"broadcast|shape|mismatch|dimension|size|incompatible|aligned|axis",
                          re.IGNORECASE)


# numpy's words for a matmul of mismatched sizes, which name its internals
_GUFUNC_MISMATCH = re.compile(r"(\w+): Input operand (\d) has a mismatch in its core dimension \d, with gufunc "
                              r"signature \S+ \(size (\d+) is different from (\d+)\)")


def _without_gufunc_words(message):
    """numpy's matmul mismatch told without ``gufunc signature (n?,k),(k,m?)``."""
    match = _GUFUNC_MISMATCH.match(message)
    if match is None:
        return message
    name, operand, size, other = match.groups()
    left, right = (other, size) if operand == "1" else (size, other)
    return (f"{name} (@): the left operand's last axis ({left}) must equal the right operand's first "
            f"axis ({right})")


def _is_about_shapes(message):
    """Whether a ValueError's message is about shapes (then it is a ``ShapeError``), not about
    a value such as ``int(nan)`` or ``math.sqrt(-1)`` (then it stays a ``ValueError``)."""
    return bool(_SHAPE_WORDS.search(message))


def _is_numba_error(error):
    return any(cls.__module__.startswith("numba") and cls.__name__ == "NumbaError"
               for cls in type(error).__mro__)


def _numba_error_line(error, generated_file):
    loc = getattr(error, "loc", None)
    if loc is not None and getattr(loc, "filename", None) == generated_file and loc.line:
        return loc.line
    name = re.escape(generated_file.rsplit("/", 1)[-1])
    found = re.findall(rf'File "[^"]*{name}", line (\d+)', str(error))
    return int(found[-1]) if found else None


def _failing_line(tb, generated_file):
    """The line of the innermost frame of the generated function in ``tb``."""
    line = None
    for frame, lineno in traceback.walk_tb(tb):
        if frame.f_code.co_filename == generated_file:
            line = lineno
    return line


def _python_rerun(python_fn, call_args, generated_file):
    """(failing line, exception) of the generated Python re-run on copies of the arguments
    (the user's arrays stay untouched); (None, None) if it does not fail."""
    copies = [value.copy() if isinstance(value, np.ndarray) else value for value in call_args]
    try:
        with np.errstate(all="ignore"):
            python_fn(*copies)
    except Exception as rerun_error:
        return _failing_line(sys.exc_info()[2], generated_file), rerun_error
    return None, None


def _first_line(error):
    """The message of ``error`` without the source locations numba appends."""
    lines = [line for line in _strip_ansi(str(error)).splitlines() if line.strip()]
    return lines[0].strip() if lines else type(error).__name__


def _describe_origin(fn_ir, source, generated_file, line):
    """Text naming the user's line (and the generated one) that ``line`` of the source is."""
    if line is None:
        return ""
    source_lines = source.splitlines()
    generated = source_lines[line - 1].strip() if 0 < line <= len(source_lines) else "?"
    location = line_locations(fn_ir, source).get(line)
    text = f'  in generated code: File "{generated_file}", line {line}\n    {generated}'
    if location is None:
        return text
    return f"{location.describe()}\n{text}"


def _compile_failure(error, target, fn_ir, source, generated_file, line):
    first = next((part.strip() for part in _strip_ansi(str(error)).splitlines()
                  if part.strip() and not part.startswith("Failed in")), "")
    where = _describe_origin(fn_ir, source, generated_file, line)
    return GeneratedCodeError(
        f"{target.name}: numba could not compile the code adcompile generated for it. This is a "
        f"bug in adcompile, not in your code: please report it with this message "
        f"(adcompile.source(..., stage='lowered') shows the whole generated function).\n"
        f"numba: {first}\n{where or '  (the failing generated line is unknown)'}")


def _strip_ansi(text):
    return re.sub(r"\x1b\[[0-9;]*m", "", text)
