"""Derivatives inside compiled code: ``adcompile.grad(loss)(w, X, y)`` in a compiled body.

The frontend sees ``adcompile.grad``/``value_and_grad``/``jvp`` (or a derived function made at
module level) being called, builds the derived IR for the argument types at the call site and
inlines it, so the whole program is one numba function. The inlined code is wrapped in a
``CustomCall`` whose info carries the reverse rule for differentiating it again: the adjoint
of a gradient call is a Hessian-vector product (the Hessian is symmetric), computed by
forward mode over reverse mode:

    g = grad(L, wrt=W)(x)     =>    x̄ += H ḡ  =  jvp(grad(L, wrt=all), x, tangent ḡ on W)
"""
from ..api.compiled import CompiledFunction
from ..api.derived import MATRIX_KINDS, DerivedFunction, grad, value_and_grad
from . import forward as derivatives
from ..transforms.derived_reverse import pullback_ir
from ..errors import CallError, located
from ..frontend.extensions import register_classifier
from ..frontend.translator.inline import bind_arguments
from ..frontend.resolve import UserFunction
from ..frontend.static_values import StaticStr
from ..frontend.values import NoneValue, TupleValue
from ..ir.builder import Namer
from ..ir.clone import inline_function
from ..ir.nodes import Const, CustomCall, Var
from ..transforms.forward import forward
from ..transforms.reverse import reverse
from .nested_trees import call_with_trees, results_with_aux, value_of_tree

_FACTORIES = {}


class DerivativeFactory:
    """``adcompile.grad`` (and friends) as a value inside compiled code."""

    def __init__(self, kind):
        self.kind = kind

    def compile_call(self, tr, args, kwargs, node):
        if self.kind == "jvp":
            return call_jvp(tr, args, kwargs, node)
        if not args:
            raise tr.error(f"adcompile.{self.kind} needs a function", node, CallError)
        _check_in_code_keywords(tr, self.kind, kwargs, node)
        wrt = kwargs.get("wrt", kwargs.get("argnums", args[1] if len(args) > 1 else None))
        mode = kwargs.get("mode", args[2] if len(args) > 2 else None)
        mode = "rev" if mode is None else _static_mode(tr, mode, node)
        has_aux = _static_flag(tr, kwargs.get("has_aux"), "has_aux", node)
        return DerivedInCode(self.kind, _base_function(tr, args[0], node), _static_wrt(tr, wrt, node), mode, has_aux)


def _check_in_code_keywords(tr, kind, kwargs, node):
    """Keywords of a derivative taken inside compiled code: ``wrt`` (or ``argnums``), ``mode`` and
    ``has_aux``."""
    unknown = sorted(set(kwargs) - {"wrt", "argnums", "mode", "has_aux"})
    if unknown:
        raise tr.error(f"adcompile.{kind} inside compiled code takes wrt= (argnums=), mode= and has_aux=, not "
                       f"{', '.join(unknown)}", node, CallError)
    if "wrt" in kwargs and "argnums" in kwargs:
        raise tr.error(f"adcompile.{kind}: pass wrt= or argnums=, not both", node, CallError)


def _static_mode(tr, mode, node):
    if isinstance(mode, (Const, StaticStr)) and mode.value in ("rev", "fwd"):
        return mode.value
    raise tr.error("mode must be the constant 'rev' or 'fwd'", node, CallError)


def _static_flag(tr, value, name, node):
    if value is None:
        return False
    if isinstance(value, Const) and isinstance(value.value, bool):
        return value.value
    raise tr.error(f"{name} must be the constant True or False", node, CallError)


def _static_wrt(tr, wrt, node):
    if wrt is None:
        return 0
    if isinstance(wrt, TupleValue):
        return tuple(_static_wrt(tr, item, node) for item in wrt.items)
    if isinstance(wrt, (Const, StaticStr)) and isinstance(wrt.value, (int, str)):
        return wrt.value
    raise tr.error("wrt must be a constant int, name or tuple", node, CallError)


def _base_function(tr, value, node):
    if isinstance(value, UserFunction):
        return CompiledFunction(getattr(value.pyfunc, "__adcompile_python__", value.pyfunc))
    if isinstance(value, DerivedInCode):
        return value.derived
    raise tr.error("the argument of adcompile.grad inside compiled code must be a function", node, CallError)


class DerivedCallInfo:
    """What a CustomCall made from an inlined derivative needs to be differentiated again."""

    def __init__(self, derived, sig, n_hidden):
        self.derived = derived
        self.sig = sig
        self.n_hidden = n_hidden

    def __str__(self):
        return self.derived.name

    def describe(self):
        return f"inlined {self.derived.name}"

    def reverse_rule(self, ctx, stmt, b):
        """The call's reverse rule (see ``transforms/reverse/context.py``)."""
        derived = self.derived
        if derived.kind == "jvp" and not isinstance(derived.base, DerivedFunction):
            return self.reverse_of_jvp(ctx, stmt, b)
        if derived.kind not in ("grad", "value_and_grad") or isinstance(derived.base, DerivedFunction) \
                or derived.has_aux:
            return self.reverse_by_pullback(ctx, stmt, b)
        inputs = stmt.inputs
        active = [k for k, a in enumerate(inputs) if isinstance(a, Var) and ctx.is_active(a)]
        if not active:
            return
        wrt = derived.resolved_wrt(self.sig)
        primal = derived.primal_ir(self.sig)
        gradient = reverse(primal, active, Namer(), mode="grad")
        hvp = forward(gradient, wrt, Namer())
        grads_out = stmt.outputs[-len(wrt):]
        cotangents = [ctx.take_cotangent(out, b) for out in grads_out]
        results = inline_function(hvp, list(inputs) + cotangents, ctx.namer, b.block, stmt.loc)
        n = len(active)
        first_order, second_order = results[:n], results[n:]
        value_ct = ctx.take_cotangent(stmt.outputs[0], b) if derived.kind == "value_and_grad" else None
        for k, position in enumerate(active):
            contribution = second_order[k]
            if value_ct is not None:
                contribution = b.add(contribution, b.mul(value_ct, first_order[k]))
            ctx.accumulate(b, inputs[position], contribution)

    def reverse_by_pullback(self, ctx, stmt, b):
        """Adjoints of any other derived function (a Hessian, a Jacobian, a derivative of a
        derivative): its vjp IR (``derived_reverse.pullback_ir``) inlined with the outputs'
        adjoints as cotangents."""
        derived = self.derived
        inputs = stmt.inputs  # the derived IR's parameters, in order (hidden arrays are never active)
        active = [k for k, a in enumerate(inputs) if isinstance(a, Var) and ctx.is_active(a)]
        if not active:
            return
        pullback = pullback_ir(derived, self.sig, active)
        if len(pullback.params) - len(inputs) != len(stmt.outputs):
            raise located(CallError, f"reverse mode through {derived.name} called inside compiled code: "
                          "a result that is a constant is not supported", stmt.loc)
        cotangents = [ctx.take_cotangent(out, b) for out in stmt.outputs]
        results = inline_function(pullback, list(inputs) + cotangents, ctx.namer, b.block, stmt.loc)
        for position, contribution in zip(active, results[len(stmt.outputs):]):
            ctx.accumulate(b, inputs[position], contribution)

    def reverse_of_jvp(self, ctx, stmt, b):
        """Adjoints of ``(out, J t) = jvp(f, p, t)``: p̄ += vjp(ū) + d/dp<t̄_out, J(p) t>, t̄ += vjp(t̄_out)."""
        derived = self.derived
        primal = derived.primal_ir(self.sig)
        tangent_positions = derived.resolved_wrt(self.sig)
        n_primal = len(primal.params)
        inputs = stmt.inputs
        primal_inputs, tangent_inputs = inputs[:n_primal], inputs[n_primal:]
        active = [k for k, a in enumerate(primal_inputs) if isinstance(a, Var) and ctx.is_active(a)]
        active_tangents = [j for j, a in enumerate(tangent_inputs) if isinstance(a, Var) and ctx.is_active(a)]
        if not active and not active_tangents:
            return
        wrt = sorted(set(active) | set(tangent_positions))
        n_out = len(primal.results)
        outs, touts = stmt.outputs[:n_out], stmt.outputs[n_out:]
        out_cts = [ctx.take_cotangent(v, b) for v in outs]
        tout_cts = [ctx.take_cotangent(v, b) for v in touts]
        pullback = reverse(primal, wrt, Namer(), mode="vjp")
        by_outputs = inline_function(pullback, list(primal_inputs) + out_cts, ctx.namer, b.block, stmt.loc)
        second = forward(pullback, tangent_positions, Namer())
        results = inline_function(second, list(primal_inputs) + tout_cts + list(tangent_inputs),
                                  ctx.namer, b.block, stmt.loc)
        n_res = n_out + len(wrt)
        by_tangent_outputs = results[n_out:n_res]
        curvature = results[n_res + n_out:]
        for k in active:
            position = wrt.index(k)
            total = b.add(by_outputs[n_out + position], curvature[position])
            ctx.accumulate(b, primal_inputs[k], total)
        for j in active_tangents:
            position = wrt.index(tangent_positions[j])
            ctx.accumulate(b, tangent_inputs[j], by_tangent_outputs[position])


class DerivedInCode:
    """``adcompile.grad(f)`` (a derived function) as a value inside compiled code."""

    def __init__(self, kind, base, wrt, mode="rev", has_aux=False):
        self.kind = kind
        self.derived = DerivedFunction(base, kind, wrt, mode=mode, has_aux=has_aux)

    def compile_call(self, tr, args, kwargs, node):
        derived = self.derived
        if kwargs or len(args) != len(derived.param_names):  # keywords and defaults bind as in a call
            args = list(bind_arguments(tr, derived.python_function(), args, kwargs, node).values())
        if any(isinstance(a, TupleValue) for a in args):  # pytree arguments: the flat function's derivative
            return call_with_trees(tr, derived, args, node, inline_derived)
        atoms = [tr.as_atom(a, node) for a in args]
        derived.check_arity(atoms)
        sig, outputs = inline_derived(tr, derived, atoms, node)
        if derived.has_aux:  # (grads, aux), ((value, aux), grads), (matrix, aux): aux a tree of atoms
            return value_of_tree(results_with_aux(derived, sig, outputs))
        if derived.kind in MATRIX_KINDS:
            return outputs[0]
        values, grads = derived.split(sig, outputs) if derived.kind != "grad" else (None, derived.split(sig, outputs)[1])
        grads = TupleValue(list(grads)) if isinstance(grads, tuple) else grads
        if derived.kind == "grad":
            return grads
        values = TupleValue(list(values)) if isinstance(values, tuple) else values
        return TupleValue([values, grads])


def inline_derived(tr, derived, atoms, node):
    """Inline the code of ``derived`` called on ``atoms`` as a CustomCall that knows how to be
    differentiated again: (the signature, the list of its results)."""
    sig = tuple(a.type for a in atoms)
    try:
        fn_ir = derived.ir(sig)
    except CallError as exc:
        raise tr.error(str(exc), node, CallError) from None
    hidden = getattr(derived.primal_ir(sig), "hidden_values", [])
    inputs = atoms + [tr.hidden_array(value, "global_array", node) for value in hidden]
    region = []
    outputs = list(inline_function(fn_ir, inputs, tr.namer, region, tr.loc))
    tr.block.append(CustomCall([o for o in outputs if isinstance(o, Var)], inputs, region,
                               DerivedCallInfo(derived, sig, len(hidden)), tr.loc))
    return sig, outputs


def call_jvp(tr, args, kwargs, node):
    if len(args) != 3:
        raise tr.error("adcompile.jvp(f, primals, tangents) takes three arguments", node, CallError)
    base = _base_function(tr, args[0], node)
    primals = args[1].items if isinstance(args[1], TupleValue) else [args[1]]
    tangents = args[2].items if isinstance(args[2], TupleValue) else [args[2]]
    wrt = tuple(k for k, t in enumerate(tangents) if not isinstance(t, NoneValue))
    derived = DerivedFunction(base, "jvp", wrt)
    atoms = [tr.as_atom(p, node) for p in primals]
    sig = tuple(a.type for a in atoms)
    fn_ir = derived.ir(sig)
    hidden = getattr(derived.primal_ir(sig), "hidden_values", [])
    inputs = atoms + [tr.hidden_array(value, "global_array", node) for value in hidden]
    inputs += [tr.as_atom(tangents[k], node) for k in wrt]
    region = []
    results = inline_function(fn_ir, inputs, tr.namer, region, tr.loc)
    tr.block.append(CustomCall([r for r in results if isinstance(r, Var)], inputs, region,
                               DerivedCallInfo(derived, sig, len(hidden)), tr.loc))
    n = len(results) // 2
    outs, touts = results[:n], results[n:]
    if base.user_returns_tuple(sig):
        return TupleValue([TupleValue(outs), TupleValue(touts)])
    return TupleValue([outs[0], touts[0]])


@register_classifier
def _classify(value):
    if value is grad:
        return DerivativeFactory("grad")
    if value is value_and_grad:
        return DerivativeFactory("value_and_grad")
    if value is derivatives.jvp:
        return DerivativeFactory("jvp")
    if value is derivatives.hessian:
        return DerivativeFactory("hessian")
    if value is derivatives.jacobian:
        return DerivativeFactory("jacobian")
    if isinstance(value, DerivedFunction):
        holder = DerivedInCode.__new__(DerivedInCode)
        holder.kind, holder.derived = value.kind, value
        return holder
    if isinstance(value, CompiledFunction):
        return UserFunction(value.pyfunc)
    return None
