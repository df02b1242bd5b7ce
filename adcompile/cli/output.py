"""Printing for the command line: syntax highlighting on a terminal, plain text otherwise."""
import os
import sys


def use_color(stream, no_color_flag):
    """Colour only on a terminal, and not with ``--no-color`` or the ``NO_COLOR`` convention."""
    if no_color_flag or os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def python_text(text, color):
    """``text`` (Python source), highlighted for a terminal if ``color`` and pygments is there."""
    if not color:
        return text
    try:
        from pygments import highlight  # lazy: optional
        from pygments.formatters import TerminalFormatter  # lazy: optional
        from pygments.lexers import PythonLexer  # lazy: optional
    except ImportError:
        return text
    return highlight(text, PythonLexer(), TerminalFormatter())


def heading(text, color):
    return f"\x1b[1m{text}\x1b[0m" if color else text


def print_error(prefix, error, stream=None):
    """One error, located as adcompile locates it, without a Python traceback."""
    stream = stream or sys.stderr
    print(f"{prefix}: {type(error).__name__}: {error}", file=stream)
