"""Looking inside compiled and derived functions: ``source``, ``ir`` and ``source_path``.

Each answers for the signature of the example arguments it is given, else for that of the last
call (``call_signatures.py``, which also says what a call with Module arguments runs: the code
of a flat function of the module's arrays). The notebook display is ``notebook_display.py``.
"""
from pathlib import Path

from ..boundary import api_boundary
from ..api.specialised import Specialised
from ..api.call_signatures import resolve
from ..api.source_stages import DIFFERENTIATED
from ..errors import CallError
from ..ir.printer import format_function


def specialised(fn, what):
    """The ``Specialised`` behind ``fn``: itself, or the function behind a ``vjp`` pullback
    (its ``.derived``)."""
    target = fn if isinstance(fn, Specialised) else getattr(fn, "derived", fn)
    if not isinstance(target, Specialised):
        raise CallError(f"adcompile.{what} takes a function made by adcompile.compile, grad, "
                        "value_and_grad, hessian, jacobian or the pullback of vjp, not "
                        f"{type(fn).__name__} {getattr(fn, '__name__', '')}".rstrip())
    return target


@api_boundary
def source(fn, /, *args, stage=DIFFERENTIATED, **kwargs):
    """The generated source of a compiled or derived function, at a stage of the compiler.

    For the signature of the call ``fn(*args, **kwargs)`` if arguments are given (keywords and
    defaults bound as a call binds them), else for the last call (of ``fn`` or of the function
    it derives from; an argument of ``fn`` named ``stage`` is then passed positionally).
    ``stage`` is one of (``adcompile.ir_stages`` lists them all, in the compiler's order):

    - ``"differentiated"`` (the default): the Python generated from the differentiated and
      simplified IR, the readable code; what ``backend="python"`` runs.
    - ``"lowered"``: exactly the code the function's backend runs; for numba, the lowered
      code (elementwise statements fused into loops behind run-time length checks, buffers
      reused), the file ``source_path`` names.
    - an IR stage (``"parsed"``, ``"grad(f): transformed"``, a pass): the IR after it.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def cube(x):
    ...     return np.sum(x ** 3)
    >>> float(cube(np.ones(2)))
    2.0
    >>> text = adcompile.source(adcompile.grad(cube))  # cube was called: its signature is used
    >>> "def cube_grad(x):" in text and "x ** 2" in text
    True
    >>> print(adcompile.source(cube, stage="parsed"))
    def cube(x:f8[:]):
      _t:f8[:] = pow(x:f8[:], 3)
      _t_1:f8 = sum(_t:f8[:])
      return [_t_1:f8]
    """
    return specialised(fn, "source").source(*args, stage=stage, **kwargs)


@api_boundary
def ir(fn, /, *args, **kwargs):
    """The IR (adcompile's typed intermediate representation) that the source is generated
    from, as text: one typed statement per line, ``name:dtype[:]`` for arrays.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def square(x):
    ...     return x * x
    >>> print(adcompile.ir(square, 3.0))
    def square(x:f8):
      _t:f8 = mul(x:f8, x:f8)
      return [_t:f8]
    """
    target, sig = resolve(specialised(fn, "ir"), args, "ir", kwargs)
    return format_function(target.ir(sig))


@api_boundary
def source_path(fn, /, *args, **kwargs):
    """The path of the generated module file that runs (for a debugger or an editor): its
    text is ``source(fn, *args, stage="lowered")``.

    With ``backend="python"`` this file's code is what runs, so ``breakpoint()``-style
    debugging, ``pdb`` and tracebacks point into it.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def half(x):
    ...     return x / 2.0
    >>> path = adcompile.source_path(half, 1.0)
    >>> path.name.startswith("half_"), path.read_text() == adcompile.source(half, 1.0)
    (True, True)
    """
    target, sig = resolve(specialised(fn, "source_path"), args, "source_path", kwargs)
    compiled = target.specialization(sig)[2]
    return Path(getattr(compiled, "py_func", compiled).__code__.co_filename)
