"""Logarithms of the logistic function, seen through before reverse mode differentiates.

Binary cross-entropy written the natural way,

    p = 1.0 / (1.0 + np.exp(-z))
    loss = -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))

differentiated rule by rule divides three times per element (by p, by 1 - p, and by 1 + e in
the rule of ``1 / (1 + e)``), zero-safely, where the derivative of the composite needs no
division. This pass rewrites each such logarithm into a primitive of the same value (the
same ``np.log`` of the same operand) whose reverse rule is the composite's
(``ir/primitives/numeric/logistic.py``):

    log(P)  with P = 1 / (1 + E), E = exp(U)   ->  log_of_logistic(P, E, U)
    log(Q)  with Q = 1 - P, P as above         ->  log_of_logistic_complement(Q, P, U)

(``1 + E`` in either order, the ones int or float), so the backward of the cross-entropy
above is ``c * (y - p)``-like products, as written by hand.

Invariant, decided in ``_logistic_operands`` alone: where the logarithm runs, P, E and U (and
Q) hold the values the matched statements computed from one another. It holds when each is
assigned by one statement and never written in place (nor memory it shares: ``Uses.stable``),
the exp, the division (and the subtraction) and the logarithm are statements of one block in
that order, and nothing between the exp and the logarithm assigns U (a loop could otherwise
update U before the logarithm reads the previous iteration's P). Then the logarithm is a
function of U alone and its rule's cotangent of U is the whole derivative.
"""
from ...ir.clone import copy_function
from ...ir.nodes import Assign, Const, Var, walk
from ...passes.uses import Uses


def see_through_logistic_logs(fn):
    """``fn`` with each logarithm of a logistic function rewritten (a copy; ``fn`` itself if
    it has none), for reverse mode to differentiate."""
    if not any(isinstance(s, Assign) and s.prim == "log" for s in walk(fn.body)):
        return fn
    copy = copy_function(fn)
    uses = Uses(copy, with_memory=True)
    definitions = {s.target: s for s in walk(copy.body) if isinstance(s, Assign) and uses.single_def(s.target)}
    blocks = [copy.body] + [nested for stmt in walk(copy.body) for nested in stmt.blocks()]
    rewrites = []
    for block in blocks:
        positions = {id(stmt): k for k, stmt in enumerate(block)}
        rewrites += [(stmt, operands) for stmt in block if isinstance(stmt, Assign) and stmt.prim == "log"
                     and not stmt.inplace
                     for operands in [_logistic_operands(stmt, block, positions, definitions, uses)] if operands]
    for stmt, (prim, args) in rewrites:
        stmt.prim, stmt.args, stmt.params = prim, args, {}
    return copy if rewrites else fn


def _is_one(atom):
    return isinstance(atom, Const) and not isinstance(atom.value, bool) and atom.value == 1


def _logistic_operands(log, block, positions, definitions, uses):
    """(primitive, arguments) replacing ``log``, a statement of ``block`` (``positions``: each
    statement's place in it, by id), if its operand is a logistic function (or one minus one)
    under the module's invariant; else None."""
    def defined(atom, prim):
        stmt = definitions.get(atom) if isinstance(atom, Var) else None
        return stmt if stmt is not None and stmt.prim == prim and not stmt.inplace and uses.stable(atom) else None

    operand = log.args[0]
    complement = defined(operand, "sub")
    if complement is not None and not _is_one(complement.args[0]):
        complement = None
    logistic = defined(complement.args[1] if complement else operand, "div")
    if logistic is None or not _is_one(logistic.args[0]):
        return None
    denominator = defined(logistic.args[1], "add")
    if denominator is None:
        return None
    exp = next((defined(e, "exp") for one, e in (denominator.args, denominator.args[::-1])
                if _is_one(one) and defined(e, "exp")), None)
    if exp is None or not isinstance(exp.args[0], Var) or not uses.stable(exp.args[0]):
        return None
    chain = [exp, denominator, logistic] + ([complement] if complement else []) + [log]
    places = [positions.get(id(stmt)) for stmt in chain]
    if None in places or places != sorted(set(places)):
        return None
    exponent = exp.args[0]
    if any(exponent in s.writes() for stmt in block[places[0] + 1:places[-1]] for s in walk([stmt])):
        return None
    if complement:
        return "log_of_logistic_complement", [operand, logistic.target, exponent]
    return "log_of_logistic", [operand, exp.target, exponent]
