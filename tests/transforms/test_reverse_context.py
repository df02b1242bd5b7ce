"""A region's own reverse rule works through the public ``ReverseContext`` alone.

The statement ``y = x * x`` of a translated function is wrapped into a ``CustomCall`` whose
rule, written against the context only, gives the derivative ``3 * x * ȳ`` (deliberately not
``2 * x * ȳ``, so the test sees that the rule, not the inlined body, was differentiated).
"""
import numpy as np

from adcompile.codegen.python import generate
from adcompile.frontend.parse import translate
from adcompile.ir.builder import Namer, const
from adcompile.ir.nodes import Assign, CustomCall
from adcompile.ir.types import Type
from adcompile.transforms.reverse import reverse


def square_sum(x):
    y = x * x
    return np.sum(y)


class TripledRule:
    """The info of the region: the reverse rule, through ``ctx`` only."""

    def reverse_rule(self, ctx, stmt, b):
        (y,), (x,) = stmt.outputs, stmt.inputs
        if ctx.is_active(x) and ctx.is_active(y):
            ct = ctx.take_pending(y)
            ct = ctx.adjoint(y) if ct is None else ct
            ctx.accumulate(b, x, b.mul(b.mul(const(3.0), x), ct))

    def __repr__(self):
        return "TripledRule"


def test_region_rule_through_the_context_gives_the_gradient():
    fn = translate(square_sum, [Type("f8", 1)])
    k, square = next((k, s) for k, s in enumerate(fn.body) if isinstance(s, Assign) and s.prim == "mul")
    square.target.is_temp = False  # the region's output is a variable of its own
    fn.body[k] = CustomCall([square.target], [fn.params[0]], [square], TripledRule(), square.loc)
    gradient = reverse(fn, [0], Namer())
    namespace = {}
    exec(compile(generate(gradient), "<gradient>", "exec"), namespace)
    x = np.array([1.0, -2.0, 0.5])
    (gradient_of_x,) = namespace[gradient.name](x)
    np.testing.assert_allclose(gradient_of_x, 3.0 * x)
