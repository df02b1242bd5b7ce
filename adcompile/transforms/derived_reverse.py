"""Reverse mode (grad, value_and_grad, vjp) of a function that is itself a derivative.

Two ways, chosen by what the derived function is:

- a gradient of a compiled function (``grad``/``value_and_grad``): by the symmetry of second
  derivatives, the pullback of ``g = grad_S f`` with cotangent ``c`` is the jvp of
  ``grad_T f`` in the direction ``c`` on ``S`` (forward over reverse). Nothing is reversed
  twice, so this works for every program reverse mode handles (loops, tapes, scatters):

      vjp(grad_S f)(c)[t] = d/dx_t <c, grad_S f> = jvp(grad_T f, x, tangent c on S)[t]

- anything else (a jvp, a Hessian or Jacobian, a derivative of those): reverse mode applied
  to its IR. The transform handles IR made of primal statements, not the stacks and adjoint
  scatters of a reverse sweep: IR holding those gets its vjp from one jvp per input element
  instead (``matrix_ir.pullback_by_columns``), exact but n times the work.
"""
from ..ir.builder import Builder, Namer, const
from ..ir.nodes import AccumItem, Assign, Function, Pop, Push, Var, walk
from .matrix_ir import pullback_by_columns
from .forward import forward
from .reverse import reverse


def reverse_of_derived(base, sig, wrt, mode):
    """The IR of ``mode`` ("grad", "value_and_grad" or "vjp") of the derived function ``base``
    with respect to parameters ``wrt``, as ``transforms.reverse`` returns it for a primal IR."""
    pullback = pullback_ir(base, sig, wrt)
    if mode == "vjp":
        return pullback
    return _seeded(pullback, len(wrt), keep_values=mode == "value_and_grad")


def pullback_ir(base, sig, wrt):
    """The vjp IR of ``base`` (compiled or derived): its parameters then one cotangent per
    result; its results then the cotangents of the ``wrt`` parameters."""
    if _is_gradient_of_compiled(base):
        return _pullback_of_gradient(base, sig, wrt)
    base_ir = base.ir(sig)
    if reversible(base_ir):
        return reverse(base_ir, wrt, Namer(), mode="vjp")
    return pullback_by_columns(base_ir, wrt, [forward(base_ir, [k], Namer()) for k in wrt])


def reverse_applies(base, sig):
    """Whether ``base``'s vjp costs one backward sweep (else one jvp per input element)."""
    return _is_gradient_of_compiled(base) or reversible(base.ir(sig))


def _is_gradient_of_compiled(fn):
    return getattr(fn, "kind", None) in ("grad", "value_and_grad") and not _is_derived(fn.base) \
        and not getattr(fn, "has_aux", False)


def reversible(fn_ir):
    """Whether reverse mode handles ``fn_ir`` (no stacks or scatters of a reverse sweep)."""
    return not any(isinstance(stmt, (Push, Pop, AccumItem)) for stmt in walk(fn_ir.body))


def _is_derived(fn):
    return getattr(fn, "base", None) is not None


def _pullback_of_gradient(gradient, sig, wrt):
    """vjp IR of ``gradient`` (grad or value_and_grad of a compiled function): its parameters,
    one cotangent per result; its results, then the cotangents of the ``wrt`` parameters."""
    primal = gradient.base.ir(sig)
    gradient.check_scalar_output(primal)
    inner = gradient.resolved_wrt(sig)
    with_value = gradient.kind == "value_and_grad"
    union = sorted(set(inner) | set(wrt))
    swept = reverse(primal, union, Namer(), mode="value_and_grad" if with_value else "grad")
    second = forward(swept, inner, Namer())
    n_primal = len(primal.params)
    params, grad_cts = second.params[:n_primal], second.params[n_primal:]  # tangents on S: the cotangents
    namer = Namer()
    for var in list(params) + list(grad_cts) + [v for stmt in walk(second.body) for v in stmt.writes()]:
        namer.reserve(var.name)
    value_ct = [Var(namer.fresh("bvalue"), primal.results[0].type)] if with_value else []
    body = list(second.body)
    values, tangents = second.results[:len(swept.results)], second.results[len(swept.results):]
    offset = 1 if with_value else 0
    outputs = values[:offset] + [values[offset + union.index(s)] for s in inner]
    grads = []
    for t in wrt:
        g = tangents[offset + union.index(t)]
        if with_value:  # the value's cotangent times its gradient
            b = Builder(namer, body)
            g = b.add(g, b.mul(value_ct[0], values[offset + union.index(t)]))
        grads.append(g)
    return Function(f"{gradient.base.name}_{gradient.kind}_vjp", params + value_ct + grad_cts, body,
                    outputs + grads, True, primal.source_file)


def _seeded(pullback, n_wrt, keep_values):
    """grad / value_and_grad from a vjp IR of a scalar function: the cotangent is 1.0."""
    params = list(pullback.params)
    seed = params.pop()
    body = [Assign(seed, "alias", [const(1.0, seed.type)])] + list(pullback.body)
    n_values = len(pullback.results) - n_wrt
    results = pullback.results if keep_values else pullback.results[n_values:]
    return Function(pullback.name, params, body, list(results), True, pullback.source_file)


__all__ = ["pullback_ir", "reverse_applies", "reverse_of_derived", "reversible"]
