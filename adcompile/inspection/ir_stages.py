"""Every stage of the compiler for one function, for people debugging it (``adcompile.ir_stages``,
``adcompile source --ir``): the IR after each stage, then the differentiated and the lowered
source. The stages and their names: ``api/source_stages.py``.
"""
from ..api.call_signatures import resolve
from ..api.source_stages import stage_texts
from ..boundary import api_boundary
from .source import specialised


@api_boundary
def ir_stages(fn, /, *args, **kwargs):
    """``[(stage name, text)]``: the IR after each stage of the compiler, then the generated
    source, ``"differentiated"`` and ``"lowered"`` (any of these names is a ``stage`` of
    ``adcompile.source``). Arguments as for ``adcompile.source``.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def square(x):
    ...     return x * x
    >>> [name for name, _ in adcompile.ir_stages(adcompile.grad(square), 3.0)]
    ['parsed', 'grad(square): transformed', 'grad(square): dead code (round 1)',
     'grad(square): first contributions', 'differentiated', 'lowered']
    """
    return stage_texts(*resolve(specialised(fn, "ir"), args, "ir", kwargs))
