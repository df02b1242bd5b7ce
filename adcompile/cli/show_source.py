"""``adcompile source FILE.py:FUNCTION``: the generated source of a function or its derivative
(``--stage``: differentiated, the default, lowered, or an IR stage), and with ``--ir`` every stage."""
import inspect

import numpy as np

from ..api.derived import DerivedFunction
from ..api.source_stages import DIFFERENTIATED, LOWERED, UnknownStageError
from ..derivatives.forward import hessian
from ..inspection.source import source
from ..inspection.ir_stages import ir_stages
from ..errors import AdCompileError
from .arg_specs import make_arguments, parse_args_spec
from .argument_hint import needs_shapes
from .errors import UsageError
from .output import heading, python_text

SOURCE_STAGES = (DIFFERENTIATED, LOWERED)  # Python source; the other stages are IR text


def derived_function(fn, options):
    """The function whose source to show: ``fn`` or its gradient, Hessian or jvp."""
    wrt = tuple(options.wrt or ())
    for name in wrt:
        if name not in fn.param_names:
            raise UsageError(f"--wrt {name}: {fn.name} has no parameter {name!r} (it has "
                             f"{', '.join(fn.param_names)})")
    if options.hessian:
        if len(wrt) > 1:
            raise UsageError("--hessian takes at most one --wrt argument")
        return hessian(fn, wrt=wrt[0] if wrt else 0).derived
    if options.jvp:
        return DerivedFunction(fn, "jvp", wrt or None)
    if options.grad or wrt:
        return DerivedFunction(fn, "grad", wrt if len(wrt) > 1 else (wrt[0] if wrt else 0))
    return fn


def example_arguments(fn, options):
    """Arguments of the types ``--args`` gives (float scalars where it gives nothing)."""
    parameters = fn.param_names
    specs = parse_args_spec(options.args)
    if options.args is None:
        specs = {name: ("array", np.float64, ()) for name in parameters}
    defaults = {name: p.default for name, p in inspect.signature(fn.python_function()).parameters.items()
                if p.default is not inspect.Parameter.empty}
    return make_arguments(specs, parameters, np.random.default_rng(0), defaults=defaults)


def run(fn, options, color, out):
    try:
        return _show(fn, options, color, out)
    except AdCompileError as error:
        hint = needs_shapes(error, fn, _command(options)) if options.args is None else None
        if hint is None:
            raise
        raise hint from None


def _command(options):
    """The ``adcompile source`` command as run (without ``--args``)."""
    words = ["adcompile", "source", options.target]
    words += [flag for flag in ("--grad", "--hessian", "--jvp", "--ir") if getattr(options, flag[2:])]
    words += ["--wrt", *options.wrt] if options.wrt else []
    words += ["--backend", options.backend] if options.backend else []
    return " ".join(words)


def _show(fn, options, color, out):
    target = derived_function(fn, options)
    args = example_arguments(fn, options)
    if options.ir:
        for name, text in ir_stages(target, *args):
            print(heading(f"=== {name} ===", color), file=out)
            print(python_text(text, color) if name in SOURCE_STAGES else text, file=out)
        return 0
    try:
        text = source(target, *args, stage=options.stage)
    except UnknownStageError as error:
        raise UsageError(f"--stage {options.stage}: unknown stage; {error.stages_text}") from None
    print(python_text(text, color) if options.stage in SOURCE_STAGES else text, file=out,
          end="" if text.endswith("\n") else "\n")
    return 0
