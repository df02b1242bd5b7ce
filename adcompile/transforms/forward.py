"""Forward mode: an IR function -> an IR function that also propagates tangents (a JVP).

Every active variable ``x`` gets a tangent ``dx`` computed next to it, in the same control
flow, so loops stay loops. The transform accepts any IR the compiler produces, including
the output of reverse mode (tapes, restores, adjoint scatters): that is how Hessians are
built (forward over reverse).

    y = np.sin(x)          ->   y = np.sin(x)
                                dy = dx * np.cos(x)

Statements that assign a variable from itself (``x = x * a``) compute the new value and
its tangent into temporaries first, so rules see the old values.
"""
from ..errors import NoDerivativeRuleError, located
from ..ir.builder import Builder
from ..ir.nodes import (AccumItem, Assign, Comment, CustomCall, For, Function, If, Pop, Push, SetItem,
                        Var, While, walk)
from ..ir.primitives import Kind, has_kind, primitive
from ..passes.activity import active_vars
from .arguments import copy_written_arguments, inherit_state_params, state_params, written_arguments
from .zero_skips import without_zero_skips


class ForwardTransform:
    def __init__(self, fn, wrt, namer):
        self.fn = fn
        self.wrt = [fn.params[k] for k in wrt]
        self.namer = namer
        for stmt in walk(fn.body):
            for var in stmt.writes():
                namer.reserve(var.name)
        for var in fn.params:
            namer.reserve(var.name)
        results = [a for a in fn.results if isinstance(a, Var)]
        self.active = active_vars(fn.body, self.wrt, results)
        self.tangents = {}

    def tangent(self, var):
        if var not in self.tangents:
            self.tangents[var] = Var(self.namer.fresh("d" + var.name.lstrip("_")), var.type)
        return self.tangents[var]

    def tangent_of(self, atom):
        return self.tangent(atom) if isinstance(atom, Var) and atom in self.active else None

    def tangent_or_zeros(self, atom, out, loc=None):
        """``atom``'s tangent, or zeros like it (appended to ``out``) when it has none."""
        t = self.tangent_of(atom)
        return t if t is not None else Builder(self.namer, out, loc).call("zeros_like", atom)

    def run(self):
        tangent_params = [self.tangent(p) for p in self.wrt]
        body = []
        b = Builder(self.namer, body)
        copy_written_arguments(self.fn, b)
        for param in written_arguments(self.fn):  # the caller's tangent is left as it was too
            if param in self.wrt and param not in state_params(self.fn):
                b.emit("copy", [self.tangent(param)], target=self.tangent(param))
        for param in self.fn.params:  # written with active values, so they get tangents too
            if param in self.active and param not in self.wrt:
                b.emit("zeros_like", [param], target=self.tangent(param))
        body += self.block(self.fn.body)
        out_tangents = []
        for atom in self.fn.results:
            out_tangents.append(self.tangent_or_zeros(atom, body))
        derived = Function(f"{self.fn.name}_jvp", list(self.fn.params) + tangent_params, body,
                           list(self.fn.results) + out_tangents, True, self.fn.source_file)
        return inherit_state_params(derived, self.fn)

    def block(self, block):
        out = []
        for stmt in block:
            self.statement(stmt, out)
        return out

    def statement(self, stmt, out):
        if isinstance(stmt, Assign):
            self.assign(stmt, out)
        elif isinstance(stmt, AccumItem):
            out.append(stmt)
            if stmt.array in self.active:
                t = self.tangent_of(stmt.value)
                if t is not None:
                    out.append(AccumItem(self.tangent(stmt.array), t, stmt.items, stmt.loc))
        elif isinstance(stmt, SetItem):
            out.append(stmt)
            if stmt.array in self.active:
                t = self.tangent_or_zeros(stmt.value, out, stmt.loc)
                out.append(SetItem(self.tangent(stmt.array), t, stmt.items, stmt.loc))
        elif isinstance(stmt, Push):
            out.append(stmt)
            if stmt.tape in self.active:
                out.append(Push(self.tangent(stmt.tape), self.tangent_or_zeros(stmt.value, out, stmt.loc), stmt.loc))
        elif isinstance(stmt, Pop):
            out.append(stmt)
            if stmt.target in self.active:
                out.append(Pop(self.tangent(stmt.target), self.tangent(stmt.tape), stmt.loc))
        elif isinstance(stmt, If):
            out.append(If(stmt.cond, self.block(stmt.body), self.block(stmt.orelse), stmt.loc))
        elif isinstance(stmt, For):
            out.append(For(stmt.index, stmt.start, stmt.stop, stmt.step, self.block(stmt.body), stmt.loc))
        elif isinstance(stmt, While):
            out.append(While(self.block(stmt.cond_body), stmt.cond, self.block(stmt.body), stmt.loc))
        elif isinstance(stmt, CustomCall):
            if getattr(stmt.info, "once_differentiable", False) and any(
                    isinstance(a, Var) and a in self.active for a in stmt.inputs):
                raise located(NoDerivativeRuleError, f"{stmt.info} has a @once_differentiable backward and "
                              "cannot be differentiated twice", stmt.loc)
            rule = getattr(stmt.info, "forward_rule", None)  # a custom_jvp: its own (derivatives/custom_jvp.py)
            if rule is None:
                out.extend(self.block(stmt.forward))
            else:
                out.extend(stmt.forward)
                rule(self, stmt, out)
        elif isinstance(stmt, Comment):
            out.append(stmt)
        else:
            raise TypeError(f"forward mode: unexpected statement {stmt!r}")

    def assign(self, stmt, out):
        target = stmt.target
        if target not in self.active:
            out.append(stmt)
            return
        b = Builder(self.namer, out, stmt.loc)
        if stmt.prim == "new_tape":
            out.append(stmt)
            b.emit("new_tape", stmt.args, target=self.tangent(target))
            return
        if stmt.prim == "placeholder":  # no value, only a type: so is its tangent (not zeros_like
            out.append(stmt)             # of it, an array of the placeholder's empty shape)
            b.emit("placeholder", [], target=self.tangent(target), type=target.type)
            return
        tangents = [self.tangent_of(a) for a in stmt.args]
        rule = primitive(stmt.prim).forward_rule
        self_referencing = any(a is target for a in stmt.args)
        if rule is None and any(t is not None for t in tangents) and primitive(stmt.prim).is_differentiable:
            raise located(NoDerivativeRuleError, f"no forward-mode rule for '{stmt.prim}'", stmt.loc)
        if stmt.inplace:  # adjoint accumulation `v += w`: linear, tangent `dv += dw`
            out.append(stmt)
            t = tangents[1]
            if t is not None:
                out.append(Assign(self.tangent(target), "add", [self.tangent(target), t], loc=stmt.loc,
                                  inplace=True))
            return
        if all(t is None for t in tangents):
            rule = None  # an active variable given a value that does not depend on the inputs
        if self_referencing:  # ``x = f(x)``: the tangent rule reads the old x
            result = Var(self.namer.fresh("_" + target.name.lstrip("_") + "_new"), target.type)
            out.append(Assign(result, stmt.prim, stmt.args, stmt.params, stmt.loc))
        else:
            result = target
            out.append(stmt)
        before = len(out)
        tangent = rule(b, tangents, result, stmt.args, stmt.params) if rule else None
        tangent = self.shaped_like(b, tangent, result, stmt, out[before:])
        if (tangent is not None and tangent.type.ndim and stmt.prim != "alias"
                and not any(isinstance(s, Assign) and s.target is tangent for s in out[before:])):
            # The rule returned another variable's tangent (``x * 1.0`` -> ``dx``): the new
            # array's tangent must not share its memory, since either may be written in place.
            tangent = b.call("copy", tangent)
        if tangent is None:
            tangent = b.call("zeros_like", result)
        elif target.type.is_float and tangent.type.dtype != target.type.dtype:
            # A tangent has its value's dtype (as in JAX): ``v = 0.25 * np.arange(3) + x32`` is
            # float64 while its rule's tangent is dx32's float32, and an operation of the rules
            # that follow may take one dtype only (numba's np.linalg.solve).
            tangent = b.call("as_dtype", tangent, dtype=target.type.dtype)
        if self_referencing:
            out.append(Assign(target, "alias", [result], loc=stmt.loc))
        last = out[-1]
        if isinstance(last, Assign) and last.target is tangent and tangent.is_temp:
            last.target = self.tangent(target)
        else:
            out.append(Assign(self.tangent(target), "alias", [tangent], loc=stmt.loc))

    def shaped_like(self, b, tangent, result, stmt, rule_statements):
        """``tangent`` with ``result``'s shape. A broadcasting primitive's tangent lacks the
        dimensions that only arguments without a tangent bring (``np.ones((2, 4)) - x[:, None]``
        has the tangent ``-dx[:, None]``, of shape (n, 1)): it is broadcast then."""
        if tangent is None or not result.type.ndim:
            return tangent
        if tangent.type.ndim < result.type.ndim:
            return b.call("broadcast_to_shape", tangent, result)
        if not has_kind(stmt.prim, Kind.BROADCASTING):
            return tangent
        read = {tangent}
        for s in reversed(rule_statements):
            if isinstance(s, Assign) and s.target in read:
                read.update(a for a in s.args if isinstance(a, Var))
        primal_of = {t: p for p, t in self.tangents.items()}
        involved = {primal_of.get(v, v) for v in read}
        if all(a in involved for a in stmt.args if isinstance(a, Var) and a.type.ndim):
            return tangent
        return b.call("broadcast_to_shape", tangent, result)


def forward(fn, wrt, namer):
    """The IR function computing ``fn``'s results and their tangents; it takes one tangent
    parameter per index in ``wrt`` after ``fn``'s parameters."""
    return ForwardTransform(without_zero_skips(fn), wrt, namer).run()


__all__ = ["forward"]
