"""The ``adcompile`` command line (also ``python -m adcompile``).

    adcompile source FILE.py:FUNCTION [--grad | --wrt NAME ... | --hessian | --jvp]
                     [--args SPEC] [--stage STAGE | --ir] [--no-color]
    adcompile check FILE.py:FUNCTION --args "x=(6,) k=() n=int:5" [--order 2]
    adcompile cache [--clear]
    adcompile --version

Exit status: 0 on success (``check``: only if the derivatives pass), 1 when adcompile rejects
the function or ``check`` fails, 2 for a usage error (as argparse does).
"""
import argparse
import platform
import sys
import traceback
from importlib.metadata import version

import numpy

from ..errors import AdCompileError
from ..version import __version__
from . import cache_info, check, show_source
from .errors import UsageError
from .output import print_error, use_color
from .targets import load_function


def version_text():
    try:
        numba_version = version("numba")
    except Exception:
        numba_version = "not installed"
    return (f"adcompile {__version__} (numba {numba_version}, numpy {numpy.__version__}, "
            f"Python {platform.python_version()})")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="adcompile", description="Source-to-source automatic differentiation for numeric Python: "
        "show generated derivative code, check derivatives, manage the compile cache.")
    parser.add_argument("--version", action="version", version=version_text())
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    source = commands.add_parser("source", help="print the generated source of a function or its derivative",
                                 description="Print the Python source adcompile generates for FUNCTION "
                                 "(or its gradient, Hessian or jvp) for the argument types of --args.")
    source.add_argument("target", metavar="FILE.py:FUNCTION")
    which = source.add_mutually_exclusive_group()
    which.add_argument("--grad", action="store_true", help="the gradient (w.r.t. the first argument, or --wrt)")
    which.add_argument("--hessian", action="store_true", help="the Hessian column function (forward over reverse)")
    which.add_argument("--jvp", action="store_true", help="forward mode (w.r.t. every float argument, or --wrt)")
    source.add_argument("--wrt", nargs="+", metavar="NAME", help="differentiate with respect to these "
                        "arguments (implies --grad unless --hessian or --jvp)")
    _add_args_option(source, "argument types; default: every argument a float scalar")
    shown = source.add_mutually_exclusive_group()
    shown.add_argument("--stage", default="differentiated", metavar="STAGE",
                        help='"differentiated" (default): the readable generated code; "lowered": the '
                        'code the backend runs (for numba: fused loops, reused buffers); or an IR stage '
                        'that --ir names, e.g. "parsed"')
    shown.add_argument("--ir", action="store_true", help="print the IR after each compiler stage, then "
                        "the differentiated and the lowered source")
    source.add_argument("--no-color", action="store_true", help="no syntax highlighting")
    _add_backend_option(source)

    check = commands.add_parser("check", help="gradcheck a function on random inputs",
                                description="Compare adcompile's derivatives of FUNCTION (a float scalar "
                                "function) with central finite differences at random inputs of the "
                                "shapes in --args, with respect to every float argument.")
    check.add_argument("target", metavar="FILE.py:FUNCTION")
    _add_args_option(check, "required")
    check.add_argument("--order", type=int, choices=(1, 2), default=1, help="2: also second derivatives")
    check.add_argument("--seed", type=int, default=0, help="random seed of the inputs (default 0)")
    check.add_argument("--range", default="0.5,1.5", metavar="LOW,HIGH",
                       help="floats are drawn uniformly from [LOW, HIGH) (default 0.5,1.5)")
    _add_backend_option(check)

    cache = commands.add_parser("cache", help="show the compile cache folder, its size and entries")
    cache.add_argument("--clear", action="store_true", help="remove generated modules and numba cache files")
    return parser


def _add_args_option(parser, note):
    parser.add_argument("--args", metavar="SPEC", help=f'argument types, e.g. "x=(6,) k=() n=int:5 '
                        f'A=float32:(3,4)": a shape is a float64 array, () a float; {note}')


def _add_backend_option(parser):
    parser.add_argument("--backend", choices=("numba", "python"),
                        help="compile with numba or run the generated Python (default: the function's "
                        "own, numba for a plain function)")


def main(argv=None, out=None, err=None):
    """Run the command line; returns the exit status."""
    out, err = out or sys.stdout, err or sys.stderr
    parser = build_parser()
    try:
        options = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version (0) and usage errors (2)
        return exit_.code
    try:
        return _dispatch(options, out)
    except UsageError as error:
        print(f"adcompile {options.command}: error: {error}", file=err)
        return 2
    except Exception as error:
        if isinstance(error, AdCompileError):  # located in the user's code: no traceback needed
            print_error(f"adcompile {options.command}", error, err)
            return 1
        raise


def _dispatch(options, out):
    if options.command == "cache":
        return cache_info.run(options, out)
    try:
        fn = load_function(options.target, options.backend)
    except (UsageError, ImportError) as error:
        if isinstance(error, ModuleNotFoundError) or isinstance(error, UsageError):
            raise UsageError(str(error)) from None
        raise
    except Exception:
        # the user's file itself failed to run: its own traceback is what helps
        raise UsageError(f"running {options.target.rpartition(':')[0]} failed:\n"
                         + "".join(traceback.format_exc())) from None
    if options.command == "source":
        return show_source.run(fn, options, use_color(out, options.no_color), out)
    return check.run(fn, options, out)
