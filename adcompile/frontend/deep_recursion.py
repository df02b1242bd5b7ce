"""A bounded, temporary raise of Python's recursion limit for walks over deeply nested code.

Python's own parser and compiler, and the recursive walks over its ``ast`` (the frontend's
translation of a helper call inlines the helper's body inside the caller's translation, so a
chain of nested helper calls nests as deep as the chain), need stack depth in proportion to the
nesting of the user's code. Python's default limit (1,000 frames) stops at about a hundred
nested helper calls or a 1,500-term expression; inside ``deep_recursion()`` the limit is at least
``DEEP_RECURSION_LIMIT``, enough for 1,000 nested helpers or a 5,000-term expression, and it is
restored when the last thread using it leaves. The bound keeps the C stack safe (measured: the
deepest walk, ``copy.deepcopy`` of an AST, uses under 2 MiB of the 8 MiB a thread has at that
limit). Past it, ``RecursionError`` becomes an ``UnsupportedSyntaxError`` located at the user's
function, saying what to split (``too_deeply_nested``).
"""
import inspect
import sys
import threading
from contextlib import contextmanager

from ..errors import Location, UnsupportedSyntaxError, located

DEEP_RECURSION_LIMIT = 40_000

_lock = threading.Lock()
_users = 0
_previous = None


@contextmanager
def deep_recursion():
    """Run the body with Python's recursion limit at least ``DEEP_RECURSION_LIMIT``."""
    global _users, _previous
    with _lock:
        if _users == 0:
            _previous = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_previous, DEEP_RECURSION_LIMIT))
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                sys.setrecursionlimit(_previous)


def too_deeply_nested(pyfunc):
    """The error for a function whose helper calls or expressions nest past the raised limit."""
    name = getattr(pyfunc, "__qualname__", repr(pyfunc))
    try:
        filename = inspect.getsourcefile(pyfunc) or "<unknown>"
        lines, first = inspect.getsourcelines(pyfunc)
        location = Location(filename, first, 0, lines[0].rstrip("\n"))
    except (OSError, TypeError):
        location = None
    return located(UnsupportedSyntaxError,
                   f"{name} nests too deeply to compile: its helper calls (each inlined inside its caller) "
                   f"or one of its expressions go deeper than adcompile follows (about 1,000 nested "
                   f"helper calls, or a 5,000-term expression). Split the expression into several "
                   f"statements with intermediate variables, or call the helpers one after another "
                   f"(y = h1(x); z = h2(y)) instead of inside each other", location)
