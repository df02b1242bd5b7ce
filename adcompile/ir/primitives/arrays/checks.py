"""Run-time checks that passes and the lowering leave in generated code.

    check_matmul_shapes   raises as ``a @ b`` would when the contracted lengths differ: left
                          in place of a dead product a rewrite relied on (ir/dim_equalities.py)
    check_assertion       raises ``AssertionError(message)`` when its condition is false: the
                          user's ``assert`` (frontend/translator/statements.py)
    may_share_memory      whether two arrays' memory may overlap: decides whether a loop may
                          write one while reading the other (lowering/slice_writes.py)
    unfused_code_needed   raise UnfusedCodeNeeded: a fused loop's else branch where the
                          unfused statements were left out (lowering/deferred_fallbacks.py)
"""
from ...nodes import const
from ...types import Type
from ..declare import CHECK, NON_DIFFERENTIABLE, RAISES, RULE_ONLY, define
from ..type_rules import fixed

_PREDICATE = fixed(Type("b1"))

define("check_matmul_shapes", _PREDICATE, "rt.check_matmul_shapes(_0, _1)",
       kinds={CHECK, NON_DIFFERENTIABLE, RULE_ONLY}, shape_only=(0, 1))


def _assertion_template(types, params):
    message = repr(params["message"]).replace("{", "{{").replace("}", "}}")  # kept from str.format
    return f"rt.check_assertion(_0, {message})"


def _assertion_batch(b, args, batched, params, size):
    """``assert test`` of every member at once: the test holds for all of them (the result,
    which nothing reads, is given the batch axis the transform expects)."""
    holds = b.call("eq", b.call("sum", b.call("not", args[0])), const(0))
    return b.emit("full", [size, b.emit("check_assertion", [holds], **params)])


define("check_assertion", _PREDICATE, _assertion_template, kinds={CHECK, NON_DIFFERENTIABLE}, batch=_assertion_batch)
define("may_share_memory", _PREDICATE, "rt.may_share_memory(_0, _1)", kinds={NON_DIFFERENTIABLE, RULE_ONLY})
# a statement of its own: ``raise rt.UnfusedCodeNeeded(...)`` (a call that raises instead would leave
# numba believing the branch goes on, with the variables only the loop's side assigns undefined)
define("unfused_code_needed", _PREDICATE,
       'rt.UnfusedCodeNeeded("the shapes of this call need the unfused code (adcompile runs it instead)")',
       kinds={CHECK, RAISES, NON_DIFFERENTIABLE, RULE_ONLY})
