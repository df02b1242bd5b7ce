"""Frontend of custom Functions: ``MyFn.apply(a, b, c)`` in compiled code -> a ``CustomCall``.

The user's ``forward(ctx, ...)`` is inlined into a block of its own, with ``ctx`` a compile-time
object (``ForwardCtx``) that records what forward saves (``ctx.save_for_backward``), the
attributes it sets (``ctx.constant = c``) and the outputs it marks non-differentiable. Values
that backward will read are copied at the end of the block into variables of their own
(``saved_input = input``), so the reverse transform saves and restores exactly those when the
call sits in a loop. The call becomes

    CustomCall(outputs, inputs, forward_block, info)

where ``info`` (a ``CustomInfo``) holds the Function class and the ctx record, and is the
call's reverse rule: the reverse transform calls ``info.reverse_rule``, which translates
``backward`` (``backward.py``).
"""
import ast
import inspect

import numpy as np

from ...errors import AdCompileError, UnsupportedSyntaxError
from ...custom.function import Function, is_function_class, is_once_differentiable
from ...ir.nodes import Assign, Const, CustomCall, Var, walk
from .backward import BackwardCtx, backward_custom_call, local_parameter, new_translator, translate_backward
from ..extensions import register_attribute_handler, register_classifier
from ..parse import Translator
from ..values import NONE, NoneValue, TupleValue


class CustomInfo:
    """What the transforms need to know about one ``MyFn.apply`` call."""

    def __init__(self, cls, input_names, arguments, ctx, hidden):
        self.cls = cls
        self.name = cls.__name__
        self.input_names = input_names   # one name per forward input (after ctx)
        self.arguments = arguments       # frontend value per forward input (atoms, None, tuples)
        self.saved = ctx.saved           # what ctx.saved_tensors gives backward
        self.attrs = ctx.attrs           # ctx attributes set in forward
        self.non_differentiable = set()  # output positions marked non-differentiable
        self.materialize_grads = ctx.materialize_grads
        self.once_differentiable = is_once_differentiable(cls.backward)
        self.hidden = hidden             # (Var, array) of global arrays; shared with the function

    def __repr__(self):
        return self.name

    def reverse_rule(self, ctx, stmt, b):
        """The call's reverse rule: the user's backward (see ``transforms/reverse/context.py``)."""
        backward_custom_call(ctx, stmt, b)

    def translate_backward(self, namer, grads, needs, loc):
        """(statements, returned gradients, location of the return) of the user's backward."""
        return translate_backward(namer, self, grads, needs, loc)


# ---------------------------------------------------------------- frontend values
class FunctionClassRef:
    """A subclass of ``adcompile.Function`` named in compiled code."""

    def __init__(self, cls):
        self.cls = cls


class ApplyRef:
    """``MyFn.apply``: calling it in compiled code builds a CustomCall."""

    def __init__(self, cls):
        self.cls = cls

    def compile_call(self, tr, args, kwargs, node):
        return translate_apply(tr, self.cls, args, kwargs, node)


class ForwardCtx:
    """``ctx`` in forward: records saves, attributes and non-differentiable outputs."""

    def __init__(self, cls, depth):
        self.cls = cls
        self.depth = depth  # the forward body's own depth: saves must happen at its top level
        self.saved = []
        self.attrs = {}
        self.non_differentiable = []
        self.materialize_grads = True


class CtxMethod:
    """``ctx.save_for_backward`` and friends, called in forward."""

    def __init__(self, ctx, name):
        self.ctx, self.name = ctx, name

    def compile_call(self, tr, args, kwargs, node):
        ctx = self.ctx
        if kwargs:
            raise tr.error(f"ctx.{self.name}() takes no keyword arguments", node, UnsupportedSyntaxError)
        if tr.depth > ctx.depth:
            raise tr.error(f"ctx.{self.name}() must be called at the top level of forward, not inside a "
                           "loop or a branch decided at run time", node, UnsupportedSyntaxError)
        if self.name == "save_for_backward":
            ctx.saved = [_saveable(tr, value, node) for value in args]
        elif self.name == "mark_non_differentiable":
            ctx.non_differentiable += list(args)
        elif self.name == "set_materialize_grads":
            if len(args) != 1 or not isinstance(args[0], Const):
                raise tr.error("ctx.set_materialize_grads() takes a constant bool", node, AdCompileError)
            ctx.materialize_grads = bool(args[0].value)
        return NONE


def _saveable(tr, value, node):
    if isinstance(value, (Var, Const, NoneValue)):
        return value
    if isinstance(value, TupleValue):
        return TupleValue([_saveable(tr, v, node) for v in value.items])
    raise tr.error(f"ctx can hold arrays, numbers, None and tuples of them, not {type(value).__name__}",
                   node, AdCompileError)


_CTX_METHODS = ("save_for_backward", "mark_non_differentiable", "set_materialize_grads")


# ---------------------------------------------------------------- hooks
@register_classifier
def _classify(value):
    if is_function_class(value):
        return FunctionClassRef(value)
    owner = getattr(value, "__self__", None)  # `linear = LinearFunction.apply` bound at module level
    if is_function_class(owner) and getattr(value, "__func__", None) is Function.apply.__func__:
        return ApplyRef(owner)
    return None


@register_attribute_handler
def _attribute(tr, base, attr, node):
    if isinstance(base, FunctionClassRef):
        if attr == "apply":
            return ApplyRef(base.cls)
        raise tr.error(f"in compiled code, a custom Function is used as {base.cls.__name__}.apply(...); "
                       f"'{base.cls.__name__}.{attr}' is not supported", node, UnsupportedSyntaxError)
    if isinstance(base, ForwardCtx):
        return _forward_ctx_attribute(tr, base, attr, node)
    if isinstance(base, BackwardCtx):
        return _backward_ctx_attribute(tr, base, attr, node)
    return None


def _forward_ctx_attribute(tr, ctx, attr, node):
    if attr in _CTX_METHODS:
        return CtxMethod(ctx, attr)
    if attr in ("saved_tensors", "saved_variables"):
        return TupleValue(ctx.saved)
    if attr == "needs_input_grad":
        raise tr.error("ctx.needs_input_grad is known only in backward in adcompile (which inputs need "
                       "a gradient depends on the derivative being taken)", node, UnsupportedSyntaxError)
    if attr in ctx.attrs:
        return ctx.attrs[attr]
    raise tr.error(f"ctx has no attribute '{attr}' (set it first: ctx.{attr} = ...)", node, AdCompileError)


def _backward_ctx_attribute(tr, ctx, attr, node):
    if attr in ("saved_tensors", "saved_variables"):
        return TupleValue(ctx.info.saved)
    if attr == "needs_input_grad":
        return ctx.needs_input_grad
    if attr in ctx.info.attrs:
        return ctx.info.attrs[attr]
    raise tr.error(f"ctx has no attribute '{attr}': forward of {ctx.info.name} did not set it",
                   node, AdCompileError)


# ---------------------------------------------------------------- translators
class ForwardTranslator(Translator):
    """A Translator for an inlined forward body: also allows ``ctx.name = value``."""

    def assign(self, target, value, node):
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            base = self.env.get(target.value.id)
            if isinstance(base, ForwardCtx):
                if self.depth > base.depth:
                    raise self.error(f"ctx.{target.attr} must be set at the top level of forward, not inside "
                                     "a loop or a branch decided at run time", target, UnsupportedSyntaxError)
                base.attrs[target.attr] = _saveable(self, value, node)
                return
        super().assign(target, value, node)


def bind_parameters(tr, pyfunc, what, first, args, kwargs, node):
    """(name, value) per parameter of ``pyfunc`` after the first (ctx); ``*args`` become tuples."""
    signature = inspect.signature(pyfunc)
    try:
        bound = signature.bind(first, *args, **kwargs)
    except TypeError as exc:
        raise tr.error(f"bad call to {what}: {exc}", node, AdCompileError) from None
    pairs = []
    for name, param in list(signature.parameters.items())[1:]:
        if param.kind == param.VAR_KEYWORD:
            raise tr.error(f"{what} takes **kwargs, which is not supported", node, UnsupportedSyntaxError)
        if name in bound.arguments:
            value = bound.arguments[name]
            pairs.append((name, TupleValue(list(value)) if param.kind == param.VAR_POSITIONAL else value))
        elif param.kind == param.VAR_POSITIONAL:
            pairs.append((name, TupleValue([])))
        else:
            pairs.append((name, tr.global_value(param.default, name, node)))
    return pairs


def flat_inputs(forward, pairs):
    """(input name, value) per forward input, the items of ``*args`` one by one."""
    star = {p.name for p in inspect.signature(forward).parameters.values() if p.kind == p.VAR_POSITIONAL}
    flat = []
    for name, value in pairs:
        if name in star:
            flat += [(f"{name}[{k}]", v) for k, v in enumerate(value.items)]
        else:
            flat.append((name, value))
    return flat


def _flatten(values):
    for value in values:
        if isinstance(value, TupleValue):
            yield from _flatten(value.items)
        else:
            yield value


# ---------------------------------------------------------------- MyFn.apply(...)
def translate_apply(tr, cls, args, kwargs, node):
    forward = cls.forward
    if forward is Function.forward:
        raise tr.error(f"custom Function {cls.__name__} does not define forward", node, AdCompileError)
    stack = getattr(tr, "call_stack", ())
    if forward in stack:
        raise tr.error(f"recursive call of {cls.__name__}.apply is not supported", node, UnsupportedSyntaxError)
    block = []
    fwd = new_translator(ForwardTranslator, forward, tr.namer, tr.hints, tr.hidden_params,
                         stack + (tr.pyfunc,), tr.depth, block, tr.loc)
    fwd.user_names = tr.user_names  # (forward's names, in messages about the caller's IR)
    ctx = ForwardCtx(cls, tr.depth)
    pairs = bind_parameters(tr, forward, f"{cls.__name__}.apply", ctx, args, kwargs, node)
    fwd.env[next(iter(inspect.signature(forward).parameters))] = ctx
    pairs = [(name, NONE if isinstance(value, Var) and value.type.dtype == "none" else value)
             for name, value in pairs]  # an argument passed as None
    for name, value in pairs:
        if isinstance(value, Var):  # forward owns its variables (it may rebind them)
            value = local_parameter(tr, name, value, block)
        fwd.env[name] = value
    inputs = flat_inputs(forward, pairs)
    fwd.statements(fwd.src.node.body)
    if fwd.results is None:
        raise tr.error(f"forward of {cls.__name__} must end with a return statement", node, AdCompileError)
    atoms, is_tuple = fwd.results
    non_differentiable = set()
    for value in ctx.non_differentiable:
        positions = [k for k, a in enumerate(atoms) if a is value]
        if not positions:
            raise tr.error(f"ctx.mark_non_differentiable() of {cls.__name__} takes outputs of forward",
                           node, AdCompileError)
        non_differentiable.update(positions)
    kept = set(_flatten(ctx.saved)) | set(_flatten(ctx.attrs.values()))
    outputs = region_outputs(tr, _snake(cls.__name__), block, list(atoms), kept)
    ctx.saved = [keep(tr, v, block, "saved") for v in ctx.saved]
    ctx.attrs = {k: keep(tr, v, block, "ctx_" + k) for k, v in ctx.attrs.items()}
    register_globals_of(tr, cls.backward, node)
    info = CustomInfo(cls, [n for n, _ in inputs], [v for _, v in inputs], ctx, tr.hidden_params)
    info.non_differentiable = non_differentiable
    atoms_in = [v for _, v in inputs if isinstance(v, (Var, Const))]
    tr.block.append(CustomCall(outputs, atoms_in, block, info, tr.loc))
    return TupleValue(outputs) if is_tuple else outputs[0]


def _snake(name):
    return "".join("_" + c.lower() if c.isupper() and k else c.lower() for k, c in enumerate(name))


def region_outputs(tr, base, block, atoms, kept):
    """A variable of its own per output (``<base>_out``), assigned at the end of the forward block."""
    reads = {}
    for stmt in walk(block):
        for a in stmt.reads():
            reads[a] = reads.get(a, 0) + 1
    outputs = []
    for k, atom in enumerate(atoms):
        name = f"{base}_out" if len(atoms) == 1 else f"{base}_out{k}"
        out = Var(tr.namer.fresh(name), atom.type)
        last = block[-1] if block else None
        if (isinstance(atom, Var) and atom.is_temp and isinstance(last, Assign) and last.target is atom
                and not reads.get(atom) and atoms.count(atom) == 1 and atom not in kept):
            last.target = out  # `out = x @ w` rather than `_t = x @ w; out = _t`
        else:
            block.append(Assign(out, "alias", [atom], loc=tr.loc))
        outputs.append(out)
    return outputs


def keep(tr, value, block, base):
    """A copy of ``value`` (recursively, for tuples) in a variable that backward reads."""
    if isinstance(value, TupleValue):
        return TupleValue([keep(tr, v, block, base) for v in value.items])
    if not isinstance(value, Var):
        return value
    name = f"{base}_{value.name.lstrip('_')}" if base == "saved" and not value.is_temp else base
    kept = Var(tr.namer.fresh(name), value.type)
    block.append(Assign(kept, "alias", [value], loc=tr.loc))
    return kept


def register_globals_of(tr, backward, node):
    """Global arrays that ``backward`` (a rule translated later, by the transform) reads become
    hidden parameters now, while the function's parameter list is still being built."""
    code = getattr(backward, "__code__", None)
    if code is None:
        return
    scope = dict(backward.__globals__)
    if backward.__closure__:
        for name, cell in zip(code.co_freevars, backward.__closure__):
            try:
                scope[name] = cell.cell_contents
            except ValueError:
                pass
    for name in dict.fromkeys(code.co_names + code.co_freevars):  # in order: they become parameters
        if isinstance(scope.get(name), np.ndarray):
            tr.hidden_array(scope[name], name, node)
