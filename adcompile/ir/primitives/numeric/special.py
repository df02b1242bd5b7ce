"""Special functions: erf, erfc, the scaled erfcx, log-gamma, gamma, the polygamma family
(digamma, trigamma, ...), the logistic sigmoid ``expit`` and ``xlogy``. numba has no
``scipy.special``: each is emitted as a call of its runtime kernel (``rt.erf(x)``), written in
runtime/kernels/special_functions.py (scipy, for generated code run as Python) and beside it in
special_functions_numba.py (numba). The ``scipy=``, ``math=`` names of a declaration are the
scipy.special and math functions that are exactly the primitive (frontend/numpy/ has the handlers
of the others: digamma, polygamma, logit, ...). The derivative of ``polygamma`` of order n is
``polygamma`` of order n + 1, so gammaln, digamma and their derivatives are differentiable to
any order.
"""
import math

from ...nodes import const
from ..declare import BROADCASTING_FUNCTION, UNARY_FUNCTION, define
from ..reverse_helpers import unary_vjp
from ..type_rules import elementwise, float_of_first


def _erf_derivative(b, x):
    """d erf / dx = 2 / sqrt(pi) * exp(-x^2)"""
    return b.mul(const(2.0 / math.sqrt(math.pi)), b.call("exp", b.neg(b.mul(x, x))))


def _digamma(b, x):
    return b.call("polygamma", x, order=0)


define("erf", float_of_first, "rt.erf(_0)", kinds=UNARY_FUNCTION, arity=1, math=("erf",), scipy=("erf",),
       vjp=unary_vjp(lambda b, g, out, x: b.mul(g, _erf_derivative(b, x))))
define("erfc", float_of_first, "rt.erfc(_0)", kinds=UNARY_FUNCTION, arity=1, math=("erfc",), scipy=("erfc",),
       vjp=unary_vjp(lambda b, g, out, x: b.neg(b.mul(g, _erf_derivative(b, x)))))
# log |gamma(x)|, whose derivative digamma(x) holds for negative x too
define("gammaln", float_of_first, "rt.gammaln(_0)", kinds=UNARY_FUNCTION, arity=1, math=("lgamma",),
       scipy=("gammaln",),
       vjp=unary_vjp(lambda b, g, out, x: b.mul(g, _digamma(b, x))))
define("gamma", float_of_first, "rt.gamma(_0)", kinds=UNARY_FUNCTION, arity=1, math=("gamma",), scipy=("gamma",),
       vjp=unary_vjp(lambda b, g, out, x: b.mul(b.mul(g, out), _digamma(b, x))))
# polygamma of order n: the n-th derivative of digamma (order 0 is digamma, 1 trigamma)
define("polygamma", float_of_first, "rt.polygamma(_0, {order})", kinds=UNARY_FUNCTION,
       vjp=lambda b, g, out, args, params, active: [
           b.mul(g, b.call("polygamma", args[0], order=params["order"] + 1))])
# erfcx(x) = exp(x^2) erfc(x), a kernel of its own: written as that product it overflows (inf * 0)
# beyond |x| = 26; d/dx = 2 x erfcx(x) - 2 / sqrt(pi), in terms of erfcx again
define("erfcx", float_of_first, "rt.erfcx(_0)", kinds=UNARY_FUNCTION, scipy=("erfcx",),
       vjp=unary_vjp(lambda b, g, out, x: b.mul(g, b.sub(b.mul(b.mul(const(2.0), x), out),
                                                         const(2.0 / math.sqrt(math.pi))))))
# expit(x) = 1 / (1 + exp(-x)), a kernel of its own: both branches of a stable formula written
# with np.where would be evaluated, and the overflowing one would make the gradient nan.
define("expit", float_of_first, "rt.expit(_0)", kinds=UNARY_FUNCTION, scipy=("expit",),
       vjp=unary_vjp(lambda b, g, out, x: b.mul(b.mul(g, out), b.sub(const(1.0), out))))


def _xlogy_vjp(b, g, out, args, params, active):
    # d/dx = log(y) (infinite at y == 0: zero-safe), d/dy = x / y (0 where x == 0, even at y == 0)
    x, y = args
    return [b.call("mul_nz", g, b.call("log", y)) if active[0] else None,
            b.call("div_nz", b.mul(g, x), y) if active[1] else None]


# x * log(y), and 0 where x == 0: a primitive, since written as np.where(x == 0, 0, x * log(y))
# its derivative in x at x == 0 would be lost with the branch that was not taken.
define("xlogy", elementwise(float_result=True), "rt.xlogy(_0, _1)", kinds=BROADCASTING_FUNCTION, vjp=_xlogy_vjp)
