"""Turning a primitive into Python source: template substitution and template helpers.

A template is a string, or a callable (argument types, params) -> string, in which ``_0``,
``_1`` ... stand for the arguments and ``{name}`` for static parameters (``{dtype_name}`` for
the numpy name of a ``dtype`` parameter).
"""
from ..types import NUMPY_DTYPE_NAME
from .record import primitive


def argument_list(n, first=0):
    return ", ".join(f"_{i}" for i in range(first, n))


def shape_tuple(types, first=0, last=None):
    items = [f"_{i}" for i in range(first, len(types) if last is None else last)]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def placeholder_text(type_):
    """Source of a value of ``type_`` used to give a not-yet-assigned variable its type."""
    if type_.ndim == 0:
        return {"f8": "0.0", "f4": "np.float32(0.0)", "i8": "0", "b1": "False"}[type_.dtype]
    zeros = "(" + ", ".join(["0"] * type_.ndim) + ("," if type_.ndim == 1 else "") + ")"
    return f"np.empty({zeros}, dtype={NUMPY_DTYPE_NAME[type_.dtype]})"


def template_for(prim, arg_types, params):
    """The expression template of ``prim`` with static parameters substituted."""
    spec = primitive(prim)
    text = spec.template(arg_types, params) if callable(spec.template) else spec.template
    if "{" in text:
        fields = dict(params)
        if "dtype" in params:
            fields["dtype_name"] = NUMPY_DTYPE_NAME[params["dtype"]].split(".")[1]
        text = text.format(**fields)
    return text

