"""Looking inside compiled and derived functions: ``source``, ``ir``, ``source_path``, and the
notebook display of ``@compile`` and derived functions.

Code is generated per argument signature (dtype and ndim of each argument). Given example
arguments, these functions answer for their signature; without them, for the last signature
the function was called with -- or, for a derived function such as ``grad(f)``, the last one
``f`` (or any function it derives from) was called with.
"""
import html
from pathlib import Path

from .errors import CallError


def specialised(fn, what):
    """The ``_Specialised`` behind ``fn``: itself, or the function behind a ``hessian``,
    ``jacobian`` or a ``vjp`` pullback (their ``.derived``)."""
    from .api import _Specialised
    target = getattr(fn, "derived", fn)
    if not isinstance(target, _Specialised):
        raise CallError(f"adcompile.{what} takes a function made by adcompile.compile, grad, "
                        "value_and_grad, hessian, jacobian or the pullback of vjp, not "
                        f"{type(fn).__name__} {getattr(fn, '__name__', '')}".rstrip())
    return target


def last_signature(target):
    """The last signature ``target`` or a function it derives from was called with (or None)."""
    while target is not None:
        if target._last_signature is not None:
            return target._last_signature
        target = getattr(target, "base", None)
    return None


def signature_for(target, args, what="source", kwargs=None):
    """The signature of the call ``target(*args, **kwargs)`` -- keywords and defaults bound as
    the call binds them (``_Specialised.call_arguments``) -- or, given no arguments, the last
    one called (see :func:`last_signature`)."""
    if args or kwargs:
        return target.signature(target.call_arguments(args, kwargs))
    sig = last_signature(target)
    if sig is None:
        params = ", ".join(target.param_names)
        root = target
        while getattr(root, "base", None) is not None:
            root = root.base
        called = f"{target.name} has not been called yet" if root is target else \
            f"neither {target.name} nor {root.name} has been called yet"
        raise CallError(f"adcompile.{what}({target.name}): code is generated per argument signature "
                        f"and {called}; call one of them first, or pass example arguments: "
                        f"adcompile.{what}(fn, {params})")
    return sig


def source(fn, /, *args, **kwargs):
    """The generated Python source of a compiled or derived function.

    For the signature of the call ``fn(*args, **kwargs)`` if arguments are given (keywords and
    defaults bound as a call binds them), else for the last call (of ``fn`` or of the function
    it derives from).

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def cube(x):
    ...     return np.sum(x ** 3)
    >>> float(cube(np.ones(2)))
    2.0
    >>> text = adcompile.source(adcompile.grad(cube))  # cube was called: its signature is used
    >>> "def cube_grad(x):" in text and "x ** 2" in text
    True
    """
    target = specialised(fn, "source")
    return target.specialization(signature_for(target, args, "source", kwargs))[1]


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
    from .ir.printer import format_function
    target = specialised(fn, "ir")
    return format_function(target.ir(signature_for(target, args, "ir", kwargs)))


def source_path(fn, /, *args, **kwargs):
    """The path of the generated module file that runs (for a debugger or an editor).

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
    target = specialised(fn, "source_path")
    compiled = target.specialization(signature_for(target, args, "source_path", kwargs))[2]
    return Path(getattr(compiled, "py_func", compiled).__code__.co_filename)


def describe_call(target):
    """``grad(loss)(w, X, y)``-style text naming the function and its parameters."""
    text = f"{target.name}({', '.join(target.param_names)})"
    wrt = getattr(target, "wrt", None)
    if wrt:
        text += f", with respect to {', '.join(target.param_names[k] for k in wrt)}"
    return text


def html_display(target, title=None):
    """Notebook display: the signature; after a call, the highlighted generated source.
    ``title`` names what is shown when it is not ``target`` itself (``hessian(f, wrt='x')``,
    whose source is that of ``target``)."""
    kind = "derived function" if hasattr(target, "base") else "compiled function"
    call = describe_call(target) if title is None else f"{title}: {describe_call(target)}"
    head = (f"<p><b>adcompile {kind}</b> <code>{html.escape(call)}</code>, "
            f"backend {html.escape(target.backend)}</p>")
    sig = last_signature(target)
    if sig is None:
        return head + "<p>Call it once (or use <code>adcompile.source(fn, *args)</code>) to see " \
                      "the generated source.</p>"
    try:
        text = target.specialization(sig)[1]
    except Exception as error:  # a display must not raise: say why there is no source
        return head + f"<pre>{html.escape(f'{type(error).__name__}: {error}')}</pre>"
    types = ", ".join(f"{name}: {type_.describe()}" for name, type_ in zip(target.param_names, sig))
    return head + f"<p>Generated source for the last call ({html.escape(types)}):</p>" + _highlighted(text)


def _highlighted(text):
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f"<pre>{html.escape(text)}</pre>"
    return highlight(text, PythonLexer(), HtmlFormatter(noclasses=True))
