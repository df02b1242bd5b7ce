"""The primitive table is complete, and every derivative rule in it is checked.

Everything here is generated from ``adcompile.ir.primitives.PRIMITIVES``:

* every differentiable primitive has a reverse and a forward rule; non-differentiable ones
  have neither;
* every differentiable primitive the frontend can emit appears in the IR of a row of the rule
  table (``test_rules.CASES``), whose checks cover it at first order (test_rules.py: gradient,
  transpose identity, forward mode) and second order (test_rules_second_order.py: hvp, which
  differentiates its reverse rule, and forward over forward, which differentiates its
  forward rule);
* primitives of kind RULE_ONLY (emitted by derivative rules, so no user program calls them)
  are checked here directly, on a one-statement IR function (or, for one with arguments it
  does not differentiate, the chain of statements computing them), by the same four checks: the
  transpose identity and forward mode against central differences, then forward mode over
  each of them against central differences of the first-order result.
Primitives that are not differentiable are listed by their kind, never by name.
"""
import functools
import re

import numpy as np
import pytest

import adcompile
from adcompile.codegen.python import generate
from adcompile.ir.builder import Namer
from adcompile.ir.nodes import Assign, Function, Var, const
from adcompile.ir.primitives import PRIMITIVES, Kind, result_type
from adcompile.ir.types import Type
from adcompile.transforms.forward import forward
from adcompile.transforms.reverse import reverse
from oracles import assert_close_through, assert_transpose_identity, directional_difference
from test_rules import CASES, F32_CASES, compiled

STEP, RTOL, ATOL = 1e-5, 1e-6, 1e-8
SECOND_RTOL, SECOND_ATOL = 1e-4, 1e-6
_PRIMITIVE_CALL = re.compile(r":\S+ = (\w+)\(")  # `target:type = prim(...)` in adcompile.ir's text

DIFFERENTIABLE = sorted(name for name, spec in PRIMITIVES.items() if spec.is_differentiable)
RULE_ONLY = sorted(name for name in DIFFERENTIABLE if PRIMITIVES[name].has(Kind.RULE_ONLY))


def _float_positions(args):
    return tuple(k for k, a in enumerate(args)
                 if isinstance(a, (float, np.floating)) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


@functools.lru_cache(maxsize=None)
def primitives_in_rows():
    """{primitive: [rows]} for the primitives in the IR of the rows' scalar losses, at float64
    and, for float32 rows, at float32 (every check runs at both for those rows)."""
    found = {}
    for entry in CASES:
        for dtype in (np.float64, np.float32) if entry in F32_CASES else (np.float64,):
            args = entry.args(dtype)
            text = adcompile.ir(compiled(entry.name, "python", True)[1], *args)
            for name in _PRIMITIVE_CALL.findall(text):
                found.setdefault(name, []).append(entry.name)
    return found


def test_the_ir_text_names_known_primitives():
    unknown = set(primitives_in_rows()) - set(PRIMITIVES)
    assert primitives_in_rows() and not unknown, f"not primitives: {sorted(unknown)}"


def test_every_differentiable_primitive_has_a_reverse_and_a_forward_rule():
    missing = [f"{name}: no {mode} rule" for name in DIFFERENTIABLE
               for mode, rule in (("reverse", PRIMITIVES[name].vjp), ("forward", PRIMITIVES[name].forward_rule))
               if rule is None]
    assert not missing, missing


def test_non_differentiable_primitives_have_no_rules():
    with_rules = [name for name, spec in PRIMITIVES.items()
                  if not spec.is_differentiable and (spec.vjp is not None or spec.jvp is not None)]
    assert not with_rules, f"declared NON_DIFFERENTIABLE but given rules: {with_rules}"


def test_every_differentiable_primitive_is_in_a_row_of_the_rule_table():
    rows = primitives_in_rows()
    missing = [name for name in DIFFERENTIABLE if name not in RULE_ONLY and name not in rows]
    assert not missing, f"differentiable primitives in no row of tests/primitives/test_rules.py: {missing}"


# ----------------------------------------------------------------------------- RULE_ONLY
def _normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def _positive(*shape):
    return lambda rng: rng.uniform(0.5, 2.0, shape)


# Arguments of each RULE_ONLY primitive (arrays; positions the primitive declares shape_only
# are not differentiated).
RULE_ONLY_ARGUMENTS = {
    "mul_nz": (_normal(4), _normal(4)),
    "div_nz": (_normal(4), _positive(4)),
    "unbroadcast": (_normal(2, 3), _normal(3)),
    "broadcast_to_shape": (_normal(3), _normal(2, 3)),
    "cast_like": (_normal(3), _normal(3)),
    "cumsum_adjoint": (_normal(5),),
    "diag_adjoint": (_normal(3), _normal(3, 3)),
    "cumsum_axis_adjoint": (_normal(3, 4),),
    "right_divide": (_normal(2, 3), lambda rng: np.triu(rng.standard_normal((3, 3))) + 3.0 * np.eye(3)),
    "tril_half_diagonal": (_normal(3, 3),),
    "square_qr_factor": (_normal(3, 3),),
}
# Static parameters of the RULE_ONLY primitives that have some.
RULE_ONLY_PARAMETERS = {"cumsum_axis_adjoint": {"axis": 1}}


def _logistic_chain(prim, values):
    """``u -> e = exp(u), p = 1 / (1 + e) [, q = 1 - p] -> prim``: the logarithms of the logistic
    function are a function of ``u`` only where their other arguments are these values
    (``transforms/reverse/logistic_logs.py``), so they are checked inside the chain."""
    u = Var("u", Type("f8", np.ndim(values[0])))
    e, s, p, q, out = (Var(name, u.type) for name in ("e", "s", "p", "q", "out"))
    body = [Assign(e, "exp", [u]), Assign(s, "add", [const(1.0), e]), Assign(p, "div", [const(1.0), s])]
    if prim == "log_of_logistic":
        body.append(Assign(out, prim, [p, e, u]))
    else:
        body += [Assign(q, "sub", [const(1.0), p]), Assign(out, prim, [q, p, u])]
    return Function("op", [u], body, [out], False)


# RULE_ONLY primitives with arguments they do not differentiate (``not_differentiated``): the
# IR function their checks run on, of the one argument all the others are computed from.
RULE_ONLY_CHAINS = {"log_of_logistic": _logistic_chain, "log_of_logistic_complement": _logistic_chain}
RULE_ONLY_ARGUMENTS.update({name: (lambda rng: rng.uniform(-3.0, 3.0, 4),) for name in RULE_ONLY_CHAINS})


def test_every_rule_only_primitive_has_arguments_here():
    missing = [name for name in RULE_ONLY if name not in RULE_ONLY_ARGUMENTS]
    assert not missing, f"RULE_ONLY primitives without a row in RULE_ONLY_ARGUMENTS: {missing}"
    unchained = [name for name in RULE_ONLY if PRIMITIVES[name].not_differentiated and name not in RULE_ONLY_CHAINS]
    assert not unchained, f"RULE_ONLY primitives with undifferentiated arguments and no chain: {unchained}"


def _load(fn):
    namespace = {}
    exec(compile(generate(fn), f"<{fn.name}>", "exec"), namespace)
    return namespace[fn.name]


def _one_statement(prim, values):
    """The IR function ``op(a0, a1, ...) = prim(a0, a1, ...)`` for arguments like ``values``."""
    args = [Var(f"a{k}", Type("f8", np.ndim(v))) for k, v in enumerate(values)]
    params = RULE_ONLY_PARAMETERS.get(prim, {})
    out = Var("out", result_type(prim, [a.type for a in args], params))
    return Function("op", args, [Assign(out, prim, args, params)], [out], False)


class RuleOnlyCase:
    def __init__(self, prim):
        rng = np.random.default_rng(11)
        self.prim = prim
        self.args = [make(rng) for make in RULE_ONLY_ARGUMENTS[prim]]
        shape_only = PRIMITIVES[prim].shape_only
        self.wrt = [k for k in range(len(self.args)) if k not in shape_only]
        build = functools.partial(RULE_ONLY_CHAINS.get(prim, _one_statement), prim)
        self.op = _load(build(self.args))
        self.vjp = _load(reverse(build(self.args), self.wrt, Namer(), mode="vjp"))
        self.jvp = _load(forward(build(self.args), self.wrt, Namer()))
        vjp_ir = reverse(build(self.args), self.wrt, Namer(), mode="vjp")
        self.vjp_jvp = _load(forward(vjp_ir, self.wrt, Namer()))  # forward over reverse
        jvp_ir = forward(build(self.args), self.wrt, Namer())
        self.jvp_jvp = _load(forward(jvp_ir, self.wrt, Namer()))  # forward over forward

    def central(self, fn, directions, step=STEP):
        """The central difference of ``fn`` along ``directions`` (one per differentiated argument),
        one part per output."""
        return _parts(directional_difference(fn, self.args, dict(zip(self.wrt, directions)), step))


def _parts(value):
    return value if isinstance(value, tuple) else (value,)


@pytest.mark.parametrize("prim", RULE_ONLY)
def test_rule_only_primitive_first_order(prim):
    case = RuleOnlyCase(prim)
    rng = np.random.default_rng(12)
    u = [rng.standard_normal(np.shape(case.args[k])) for k in case.wrt]
    out = case.op(*case.args)
    v = rng.standard_normal(np.shape(out))
    numeric_ju = case.central(case.op, u)[0]
    pulled = _parts(case.vjp(*case.args, v))[1:]
    assert_transpose_identity(v, numeric_ju, pulled, u, RTOL, ATOL, f"{prim} reverse rule <J^T v, u>")
    tangent = _parts(case.jvp(*case.args, *u))[1]
    assert_close_through(v, tangent, numeric_ju, RTOL, ATOL, f"{prim} forward rule <v, J u>")


@pytest.mark.parametrize("prim", RULE_ONLY)
def test_rule_only_primitive_second_order(prim):
    """Forward mode over the reverse rule and over the forward rule, against central
    differences of the (first-order checked) rule along the same direction ``w``."""
    case = RuleOnlyCase(prim)
    rng = np.random.default_rng(13)
    u = [rng.standard_normal(np.shape(case.args[k])) for k in case.wrt]
    w = [rng.standard_normal(np.shape(case.args[k])) for k in case.wrt]
    v = rng.standard_normal(np.shape(case.op(*case.args)))
    k = len(case.wrt)

    results = _parts(case.vjp_jvp(*case.args, v, *w))  # out, cotangents, dout, their tangents
    analytic = results[-k:]
    numeric = case.central(lambda *a: case.vjp(*a, v), w)[1:]
    z = [rng.standard_normal(np.shape(x)) for x in numeric]
    assert_close_through(z, analytic, numeric, SECOND_RTOL, SECOND_ATOL, f"{prim} reverse rule, differentiated")

    results = _parts(case.jvp_jvp(*case.args, *u, *w))  # out, dout, and the tangents of both
    analytic = results[-1]
    numeric = case.central(lambda *a: case.jvp(*a, *u), w)[1]
    z = rng.standard_normal(np.shape(numeric))
    assert_close_through(z, analytic, numeric, SECOND_RTOL, SECOND_ATOL, f"{prim} forward rule, differentiated")
