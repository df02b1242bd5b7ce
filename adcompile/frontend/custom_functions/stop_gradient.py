"""``adcompile.stop_gradient(x)`` in compiled code: the primitive ``stop_gradient`` on each array or
number of ``x`` (tuples item by item; constants and None are left as they are, having no derivative)."""
from ...custom.stop_gradient import stop_gradient
from ...errors import AdCompileError
from ...ir.nodes import Var
from ..extensions import register_classifier
from ..values import TupleValue


class StopGradientRef:
    """``adcompile.stop_gradient`` named in compiled code."""

    def compile_call(self, tr, args, kwargs, node):
        if len(args) != 1 or kwargs:
            raise tr.error("adcompile.stop_gradient takes one argument (an array, a number or a tuple of them)",
                           node, AdCompileError)
        return _stopped(tr, args[0])


def _stopped(tr, value):
    if isinstance(value, TupleValue):
        return TupleValue([_stopped(tr, item) for item in value.items])
    if isinstance(value, Var) and value.type.dtype != "none":
        return tr.builder.call("stop_gradient", value)
    return value


@register_classifier
def _classify(value):
    return StopGradientRef() if value is stop_gradient else None
