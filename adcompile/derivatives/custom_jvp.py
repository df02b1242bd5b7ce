"""``adcompile.custom_jvp`` functions in compiled code: the user's jvp rule in forward mode, and
transposed in reverse mode.

A call ``h(x)`` becomes a ``CustomCall`` whose region is ``h``'s own code inlined (its value).

- Forward mode (``jvp``, ``jacobian(mode="fwd")``, a Hessian's outer pass) keeps the region as it
  is and, after it, translates ``h_jvp((x,), (dx,))`` with the inputs' tangents; the tangent it
  returns is the output's tangent (``forward_rule``, called by ``transforms/forward.py``).
- Reverse mode needs the transpose of the rule's tangent map ``dx -> dy``, which is linear: the
  rule is translated into an IR function of the primals and the tangents returning the output
  tangents, reverse mode of it with respect to the tangents (at zero tangents) gives ``J^T g``,
  and that vjp is inlined with the outputs' cotangents (``reverse_rule``). It reads the primals,
  so a second derivative differentiates it like any other code.

It is in this layer, not the frontend's, because the transpose runs the reverse transform.
"""
import inspect

from ..custom.rules import custom_jvp
from ..errors import TypeMismatchError, located
from ..frontend.custom_functions.backward import BackwardTranslator, needs_input_grad, new_translator, output_cotangent
from ..frontend.custom_functions.call import register_globals_of
from ..frontend.custom_functions.custom_rules import (CustomRuleInfo, CustomRuleRef, definition_location, finish_call,
                                                      output_atoms, translate_region)
from ..frontend.extensions import register_classifier
from ..frontend.translator.tables import until_types_settle
from ..frontend.values import NONE, NoneValue, TupleValue
from ..ir.builder import Builder, Namer, const
from ..ir.clone import inline_function
from ..ir.nodes import Assign, Comment, Const, Function, Var
from ..transforms.reverse import reverse


class CustomJVPInfo(CustomRuleInfo):
    def describe(self):
        return f"custom_jvp {self.name}"

    def rule_values(self, tr, tangents, where):
        """``jvp(primals, tangents)`` translated by ``tr``: (output tangent atoms, return location)."""
        jvp = self.rule.jvp
        params = list(inspect.signature(jvp).parameters)
        if len(params) != 2:
            raise located(TypeMismatchError, f"{jvp.__name__}, the custom_jvp rule of {self.name}, must take two "
                          "arguments: (primals, tangents)", definition_location(jvp))
        tr.env[params[0]] = TupleValue(list(self.arguments))
        tr.env[params[1]] = TupleValue(tangents)
        tr.statements(tr.src.node.body)
        if tr.results is None or len(tr.results[0]) != 2:
            raise located(TypeMismatchError, f"{jvp.__name__}, the custom_jvp rule of {self.name}, must return a pair "
                          "(output, tangent of the output)", tr.results[1] if tr.results else definition_location(jvp))
        items, loc = tr.results
        touts, is_tuple = output_atoms(tr, items[1], f"{jvp.__name__} (the custom_jvp rule of {self.name})", None)
        if is_tuple != self.out_is_tuple or len(touts) != len(where):
            raise located(TypeMismatchError, f"{jvp.__name__} returned {len(touts)} output tangent(s) for "
                          f"{len(where)} output(s) of {self.name}", loc)
        for tout, out in zip(touts, where):
            if tout.type.ndim != out.type.ndim:
                raise located(TypeMismatchError, f"{jvp.__name__} returned a tangent with {tout.type.ndim} "
                              f"dimension(s) for an output of {self.name} with {out.type.ndim}", loc)
        return touts

    def translated_rule(self, namer, hints, loc, tangents, outputs, body):
        tr = new_translator(BackwardTranslator, self.rule.jvp, namer, hints, list(self.hidden), (), 0, body, loc)
        n_hidden = len(tr.hidden_params)
        touts = self.rule_values(tr, tangents, outputs)
        if len(tr.hidden_params) != n_hidden:
            raise tr.error(f"{self.rule.jvp.__name__} reads a global array that adcompile could not pass in; "
                           "pass it as an argument")
        return touts

    # ------------------------------------------------------------ forward mode
    def forward_rule(self, transform, stmt, out):
        """Emit into ``out`` the tangents of ``stmt.outputs`` by the user's rule (``transform``: the
        ``ForwardTransform``, whose ``tangent``/``tangent_of``/``namer`` it uses)."""
        if self.rule.jvp is None:
            raise self.no_rule("defjvp(jvp)")
        if all(transform.tangent_of(a) is None for a in stmt.inputs):
            return
        hints, taken = {}, set(transform.namer.taken)

        def attempt():
            transform.namer.taken = set(taken)
            body = []
            b = Builder(transform.namer, body, stmt.loc)
            tangents = [_tangent_or_zero(b, value, transform.tangent_of(value) if isinstance(value, Var) else None)
                        for value in self.arguments]
            return body, self.translated_rule(transform.namer, hints, stmt.loc, tangents, stmt.outputs, body)
        body, touts = until_types_settle(attempt, f"type inference of {self.rule.jvp.__name__}")
        b = Builder(transform.namer, body, stmt.loc)
        for output, tout in zip(stmt.outputs, touts):
            if output in transform.active:
                body.append(Assign(transform.tangent(output), "alias", [_like(b, tout, output)], loc=stmt.loc))
        out.append(Comment(f"custom_jvp rule {self.rule.jvp.__name__} of {self.name}"))
        out.extend(body)

    # ------------------------------------------------------------ reverse mode
    def reverse_rule(self, ctx, stmt, b):
        """The transpose of the rule's tangent map (``transforms/reverse/context.py``)."""
        if self.rule.jvp is None:
            raise self.no_rule("defjvp(jvp)")
        needs = needs_input_grad(ctx, stmt)
        if not any(needs):
            return
        b.append(Comment(f"custom_jvp rule {self.rule.jvp.__name__} of {self.name}, transposed"))
        cotangents = [output_cotangent(ctx, stmt, k, b) for k in range(len(stmt.outputs))]
        tangent_map, n_primals = self.tangent_map(needs, stmt)
        n_tangents = sum(needs)
        wrt = list(range(n_primals, n_primals + n_tangents))
        vjp = reverse(tangent_map, wrt, Namer(), mode="vjp")
        vjp.body = [s for s in vjp.body if not (isinstance(s, Comment) and s.text in ("forward", "backward"))]
        primals = [a for a in self.arguments if isinstance(a, Var)]
        zeros = [b.call("zeros_like", a) for a, need in zip(self.arguments, needs) if need]
        hidden = [var for var, _ in self.hidden]
        results = inline_function(vjp, primals + zeros + hidden + cotangents, ctx.namer, b.block, stmt.loc)
        gradients = results[len(results) - n_tangents:]
        for argument, gradient in zip([a for a, need in zip(self.arguments, needs) if need], gradients):
            ctx.accumulate(b, argument, gradient)

    def tangent_map(self, needs, stmt):
        """(IR function ``(primals..., tangents of needed inputs..., hidden arrays...) -> output tangents``,
        number of primal parameters)."""
        namer, hints = Namer(), {}

        def attempt():
            namer.taken = set()
            body = []
            b = Builder(namer, body, stmt.loc)
            primal_params, arguments = [], []
            for name, value in zip(self.input_names, self.arguments):
                if isinstance(value, Var):
                    value = Var(namer.fresh(name), value.type)
                    primal_params.append(value)
                arguments.append(value)
            tangent_params, tangents = [], []
            for name, value, need in zip(self.input_names, arguments, needs):
                if need:
                    tangent_params.append(Var(namer.fresh("d" + name), value.type))
                    tangents.append(tangent_params[-1])
                else:
                    tangents.append(_tangent_or_zero(b, value, None))
            outer_arguments, self.arguments = self.arguments, arguments
            try:
                touts = self.translated_rule(namer, hints, stmt.loc, tangents, stmt.outputs, body)
            finally:
                self.arguments = outer_arguments
            results = [_like(b, tout, out) for tout, out in zip(touts, stmt.outputs)]
            params = primal_params + tangent_params + [var for var, _ in self.hidden]
            source = stmt.loc.filename if stmt.loc is not None else None
            return Function(f"{self.name}_jvp_rule", params, body, results, True, source), len(primal_params)
        return until_types_settle(attempt, f"type inference of {self.rule.jvp.__name__}")


def _tangent_or_zero(b, value, tangent):
    """The tangent passed to the rule for an argument: its tangent, or zeros (None for None)."""
    if isinstance(value, NoneValue):
        return NONE
    if tangent is not None:
        return tangent
    if isinstance(value, Const) or value.type.ndim == 0:
        return const(0.0)
    return b.call("zeros_like", value)


def _like(b, tout, output):
    """The tangent ``tout`` as a variable of ``output``'s type (a constant or another float dtype)."""
    if isinstance(tout, Const) or tout.type != output.type:
        if output.type.ndim:
            tout = b.call("add", b.call("zeros_like", output), tout)
        if tout.type != output.type:
            tout = b.call("as_dtype", tout, dtype=output.type.dtype)
        elif isinstance(tout, Const):
            tout = b.call("alias", tout)
    return tout


class CustomJVPRef(CustomRuleRef):
    """A ``custom_jvp`` function named in compiled code."""

    def compile_region(self, tr, names, inputs, node):
        rule = self.rule
        block, value = translate_region(tr, rule.fun, inputs, node)
        atoms, is_tuple = output_atoms(tr, value, f"custom_jvp function {rule.__name__}", node)
        info = CustomJVPInfo(rule, names, inputs, tr.hidden_params, is_tuple, tr.loc)
        if rule.jvp is not None:
            register_globals_of(tr, rule.jvp, node)
        return finish_call(tr, info, block, atoms, is_tuple, set())


@register_classifier
def _classify(value):
    return CustomJVPRef(value) if isinstance(value, custom_jvp) else None
