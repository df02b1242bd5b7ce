"""The notebook display of compiled and derived functions: the signature and, after a call,
the highlighted generated source (``_repr_html_``)."""
import html

from .call_signatures import last_signature
from .source_stages import differentiated_source


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
        text = differentiated_source(target, sig)  # the readable stage, adcompile.source's default
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
