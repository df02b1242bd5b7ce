"""Looking inside compiled and derived functions: ``source``, ``ir``, ``source_path``, and the
notebook display of ``@compile`` and derived functions.

Code is generated per argument signature (dtype and ndim of each argument). Given example
arguments, these functions answer for their signature; without them, for the last signature
the function was called with -- or, for a derived function such as ``grad(f)``, the last one
``f`` (or any function it derives from) was called with.

Example arguments may include Modules (``source(grad(loss), model, X, y)``): a call with them
runs a flat function of the module's parameter and buffer arrays (``module_compile.py``), and
that function's code is what these show.
"""
import html
from pathlib import Path

from .errors import CallError
from .ir.printer import format_function
from .module import Module


def specialised(fn, what):
    """The ``_Specialised`` behind ``fn``: itself, or the function behind a ``vjp`` pullback
    (its ``.derived``)."""
    from .api import _Specialised
    target = fn if isinstance(fn, _Specialised) else getattr(fn, "derived", fn)
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
    one called (see :func:`last_signature`). Module arguments: see :func:`resolve`."""
    return resolve(target, args, what, kwargs)[1]


def resolve(target, args, what="source", kwargs=None):
    """(the function whose generated code the call ``target(*args, **kwargs)`` runs, the
    signature it runs with). That function is ``target`` itself, except when an argument is
    a Module: then, as the call does (``module_compile.run_with_modules``), the same transforms
    of the flat function of the module's arrays, with the flat arguments' signature."""
    if args or kwargs:
        args = target.call_arguments(args, kwargs)
        if any(isinstance(arg, Module) for arg in args):
            target, args = _flat_target(target, args, what)
        return target, target.signature(args)
    sig = last_signature(target)
    if sig is None:
        params = ", ".join(target.param_names)
        root = target
        while getattr(root, "base", None) is not None:
            root = root.base
        called = f"{target.name} has not been called yet" if root is target else \
            f"neither {target.name} nor {root.name} has been called yet"
        if _called_with_modules(root):
            called += (" with arguments that are not Modules (a call with a Module runs a function of the "
                       "module's arrays, compiled per model structure)")
        raise CallError(f"adcompile.{what}({target.name}): code is generated per argument signature "
                        f"and {called}; call one of them first, or pass example arguments: "
                        f"adcompile.{what}(fn, {params})")
    return target, sig


def _called_with_modules(root):
    """Whether ``root`` (a compiled function) was called with a Module argument."""
    from .module_compile import _flat_functions
    pyfunc = getattr(root, "pyfunc", None)
    return any(key[0] is pyfunc for key in list(_flat_functions))


def _flat_target(target, args, what):
    """(flat function, flat arguments) that a call of ``target`` with Module arguments runs."""
    from .api import CompiledFunction, DerivedFunction
    from .module_compile import FlatFunction, _flat_chain, _trainable_positions, flat_arguments, flat_function
    root = target
    while isinstance(root, DerivedFunction):
        root = root.base
    if isinstance(root, FlatFunction):  # the pullback of vjp with a Module: already flat
        return target, flat_arguments(args)
    if isinstance(target, CompiledFunction):
        return flat_function(target.pyfunc, args, target.backend), flat_arguments(args)
    target.check_arity(args)
    # hessian(f, wrt=k) and jacobian(f, wrt=k) of a Module: dicts assembled from many functions
    if (target.kind in ("hessian", "jacobian", "vjp") or target.tangents_only) and any(isinstance(args[k], Module) for k in target.wrt):
        k = next(k for k in target.wrt if isinstance(args[k], Module))
        raise CallError(f"adcompile.{what}: the Hessian or Jacobian with respect to the Module argument "
                        f"{target.param_names[k]!r} is assembled from one generated function per parameter; "
                        f"inspect the gradient instead: adcompile.{what}(adcompile.grad(f, wrt={k}), "
                        f"{', '.join(target.param_names)})")
    flat, _ = _flat_chain(target, args, _trainable_positions(args))  # what the call runs
    return flat, flat_arguments(args)


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
    target, sig = resolve(specialised(fn, "source"), args, "source", kwargs)
    return target.specialization(sig)[1]


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
    target, sig = resolve(specialised(fn, "source_path"), args, "source_path", kwargs)
    compiled = target.specialization(sig)[2]
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
        from pygments import highlight  # lazy: optional
        from pygments.formatters import HtmlFormatter  # lazy: optional
        from pygments.lexers import PythonLexer  # lazy: optional
    except ImportError:
        return f"<pre>{html.escape(text)}</pre>"
    return highlight(text, PythonLexer(), HtmlFormatter(noclasses=True))
