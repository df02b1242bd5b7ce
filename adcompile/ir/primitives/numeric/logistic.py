"""Logarithms of the logistic function: ``np.log`` of a value the reverse pass has recognised as
``p = 1 / (1 + e)``, ``e = exp(u)`` (or of ``1 - p``), with a reverse rule for the composite.

Only ``transforms/reverse/logistic_logs.py`` emits them, after checking that ``p``, ``e`` and
``u`` hold the values computed from one another. Their value is the plain logarithm of the
first argument (the same code, so the same bits, as the ``np.log`` they replace); the others
are read by the rule and not differentiated (``not_differentiated``: activity analysis sees no
derivative flow from them): the logarithm is a function of ``u`` alone, and
its derivative in ``u`` is division-free where the rules of ``log``, ``/`` and ``exp``
chained would divide twice:

    d/du log(1 / (1 + e^u))     = -e^u / (1 + e^u) = -e p
    d/du log(1 - 1 / (1 + e^u)) =  1 / (1 + e^u)   =  p

Both are accurate in the tails (no ``1 - p`` is formed); ``e p`` is nan only where ``e``
overflows (u > 709, p = 0, the logarithm -inf), and a zero cotangent stays zero there.
"""
from ..declare import BROADCASTING_FUNCTION, RULE_ONLY, define
from ..type_rules import float_of_first


def _log_of_logistic_vjp(b, g, out, args, params, active):
    p, e, u = args
    return [None, None, b.neg(b.call("mul_nz", g, b.mul(e, p))) if active[2] else None]


def _log_of_logistic_complement_vjp(b, g, out, args, params, active):
    complement, p, u = args
    return [None, None, b.mul(g, p) if active[2] else None]


# log_of_logistic(p, e, u) = log(p), p = 1 / (1 + e), e = exp(u)
define("log_of_logistic", float_of_first, "np.log(_0)", kinds=BROADCASTING_FUNCTION | {RULE_ONLY},
       vjp=_log_of_logistic_vjp, arity=3, not_differentiated=(0, 1))
# log_of_logistic_complement(q, p, u) = log(q), q = 1 - p, p = 1 / (1 + exp(u))
define("log_of_logistic_complement", float_of_first, "np.log(_0)", kinds=BROADCASTING_FUNCTION | {RULE_ONLY},
       vjp=_log_of_logistic_complement_vjp, arity=3, not_differentiated=(0, 1))
