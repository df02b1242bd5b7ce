"""The API boundary: a user's error shown with the user's frames, not adcompile's.

An error adcompile tells in the user's terms (an ``AdCompileError`` raised while compiling, or
a run-time error located at the user's line) already names the file and line that matter.
Shown with its full traceback it comes after ~60 lines of adcompile's own frames (the
frontend's recursion, the transforms, numba's dispatcher) and a chained cause. Where a public
entry point lets such an error out (a compiled function's ``__call__``, or a function wearing
the ``api_boundary`` decorator: ``adcompile.source``, ``jvp``, ``fit``, ...), it re-raises it as::

    except Exception as error:
        if not for_user(error):
            raise
        raise user_error(error) from None  # adcompile's frames hidden: ADCOMPILE_DEBUG=1 shows them

``user_error`` drops the traceback entries of adcompile's own files and numba's, and keeps the
user's (a closure of theirs called by adcompile stays visible) and the generated code's (where
``backend="python"`` ran it, so that ``pdb.pm()`` still stops in it). The traceback then reads:
the user's call, the line above (its comment says how to see more), the located message.

Not trimmed: the errors that are adcompile's own bugs (``GeneratedCodeError``,
``InternalError``), whose traceback and chained numba message are what a bug report needs, and
everything when ``ADCOMPILE_DEBUG`` is ``1`` (or ``all``, or has ``traceback`` among its
comma-separated words, next to ``ir``).
"""
import functools
import os
import sys
import types

from .errors import AdCompileError, GeneratedCodeError, InternalError

_ADCOMPILE_FOLDER = os.path.dirname(os.path.abspath(__file__)) + os.sep
_DEBUG_WORDS = {"1", "all", "traceback"}
LOCATED_MARK = "_adcompile_located"  # set on a run-time error explained at the user's line


def debugging():
    """Whether ``ADCOMPILE_DEBUG`` asks for adcompile's full tracebacks."""
    words = os.environ.get("ADCOMPILE_DEBUG", "").replace(" ", "").lower().split(",")
    return bool(_DEBUG_WORDS.intersection(words))


def for_user(error):
    """Whether ``error`` is told in the user's terms (so its internal frames can go)."""
    if isinstance(error, (GeneratedCodeError, InternalError)):
        return False  # adcompile's bug: its whole traceback goes into the report
    return (isinstance(error, AdCompileError) or getattr(error, LOCATED_MARK, False)) and not debugging()


def user_error(error):
    """``error`` with its traceback reduced to the user's frames and its chain cut."""
    error.__traceback__ = _user_frames(error.__traceback__)
    error.__cause__ = None
    error.__suppress_context__ = True
    return error


def _user_frames(tb):
    kept = []
    while tb is not None:
        if not _internal(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    chain = None
    for entry in reversed(kept):
        chain = types.TracebackType(chain, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return chain


def _internal(frame):
    filename = frame.f_code.co_filename
    if filename.startswith(_ADCOMPILE_FOLDER):
        return True
    numba = sys.modules.get("numba")
    numba_file = getattr(numba, "__file__", None)
    return numba_file is not None and filename.startswith(os.path.dirname(numba_file) + os.sep)


def api_boundary(function):
    """``function`` (a public entry point) raising its user's errors as ``user_error`` does."""
    @functools.wraps(function)
    def entry_point(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except Exception as error:
            if not for_user(error):
                raise
            raise user_error(error) from None  # adcompile's frames hidden: ADCOMPILE_DEBUG=1 shows them
    return entry_point
