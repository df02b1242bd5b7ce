"""The reverse rule of a custom Function call: the user's ``backward`` translated to IR.

For a ``CustomCall`` of a custom Function (see ``call.py``) the reverse transform calls
``CustomInfo.reverse_rule``, which translates the user's ``backward(ctx, *grad_outputs)`` to
IR in place, instead of the reverse of the inlined forward body. It talks to the transform
only through the ``ReverseContext`` it is given (``transforms/reverse/context.py``):

    # grad of: y = LinearFunction.apply(x, w, b)
    # backward of custom Function LinearFunction
    grad_output = by
    grad_weight = grad_output.T @ saved_input
    bw += grad_weight

``grad_outputs`` are the adjoints of the outputs, ``ctx.saved_tensors`` the values forward
saved, ``ctx.needs_input_grad`` a tuple of compile-time bools (True for the inputs that are
active in this derivative), so ``if ctx.needs_input_grad[i]:`` branches fold away. Each
returned gradient is added to its input's adjoint; gradients nobody needs are removed. The
result is ordinary IR, so a second transform differentiates it like any other code, unless
backward is ``@once_differentiable``: every statement of such a backward carries its
``CustomInfo`` in ``stmt.custom_backward`` for forward mode to refuse.
"""
import inspect

from ...errors import AdCompileError, UnsupportedSyntaxError, located
from ...ir.builder import Builder, const
from ...ir.nodes import Assign, Comment, Const, If, SetItem, Var, walk
from ..parse import Translator
from ..translator.tables import until_types_settle
from ..values import NONE, NoneValue, TupleValue


class CustomBackwardComment(Comment):
    """``# backward of custom Function NAME``: where the user's backward starts."""

    __slots__ = ("info",)

    def __init__(self, info):
        title = getattr(info, "backward_title", None) or f"backward of custom Function {info.name}"
        super().__init__(title + (" (once_differentiable)" if info.once_differentiable else ""))
        self.info = info


class BackwardCtx:
    """``ctx`` in backward: saved values, attributes and ``needs_input_grad`` (compile-time)."""

    def __init__(self, info, needs_input_grad):
        self.info = info
        self.needs_input_grad = needs_input_grad


def new_translator(cls, pyfunc, namer, hints, hidden_params, call_stack, depth, block, loc):
    """A translator for ``pyfunc``'s body, appending to ``block`` (as frontend/translator/inline.py does)."""
    tr = cls.__new__(cls)
    Translator.__init__(tr, pyfunc, [], namer=namer, hints=hints)
    tr.hidden_params = hidden_params
    tr.call_stack = call_stack
    tr.depth = tr.base_depth = depth
    tr.block = block
    tr.builder = Builder(namer, block, loc)
    tr.loc = loc
    tr.results = None
    tr.env = {}
    return tr


class BackwardTranslator(Translator):
    """A Translator for backward's body whose return keeps ``None`` entries."""

    def stmt_Return(self, node):
        if self.depth > self.base_depth:
            raise self.error("return inside a loop or branch of backward is not supported; assign to "
                             "variables and return them at the end", node, UnsupportedSyntaxError)
        value = NONE if node.value is None else self.expr(node.value)
        items = value.items if isinstance(value, TupleValue) else [value]
        self.results = (items, self.src.location(node))


def backward_custom_call(ctx, stmt, b):
    """Emit into ``b`` the backward of ``stmt``: the user's backward and the accumulation of its
    gradients into the inputs' adjoints. (The reverse transform restores the values the call's
    region overwrote, around this.)"""
    info = stmt.info
    needs = needs_input_grad(ctx, stmt)
    if any(needs):
        b.append(CustomBackwardComment(info))
        grads = [output_cotangent(ctx, stmt, k, b) for k in range(len(stmt.outputs))]
        body, returned, loc = info.translate_backward(ctx.namer, grads, needs, b.loc)
        accumulation = []
        accumulate_gradients(ctx, info, needs, returned, loc, Builder(ctx.namer, accumulation, b.loc))
        remove_dead(body, accumulation, ctx.kept_variables())
        for inner in walk(body):
            inner.custom_backward = info
        b.block += body + accumulation


def needs_input_grad(ctx, stmt):
    """One compile-time bool per forward input: does this derivative need its gradient?"""
    info = stmt.info
    differentiable = [out for k, out in enumerate(stmt.outputs)
                      if k not in info.non_differentiable and out.type.is_float]
    if not any(ctx.is_active(out) for out in differentiable):
        return [False] * len(info.arguments)
    return [isinstance(a, Var) and a.type.is_float and ctx.is_active(a) for a in info.arguments]


def output_cotangent(ctx, stmt, k, b):
    """The adjoint of output ``k`` (zeros if it has none, as PyTorch materializes them)."""
    out = stmt.outputs[k]
    if not ctx.is_active(out) or k in stmt.info.non_differentiable:
        return b.call("zeros_like", out) if stmt.info.materialize_grads else NONE
    pending = ctx.take_pending(out)
    if pending is not None:
        return pending
    g = ctx.adjoint(out)
    if ctx.is_overwritten(out):  # the adjoint restarts from zero for the previous value
        g_now = Var(ctx.namer.fresh("_g" + out.name), out.type)
        b.append(Assign(g_now, "alias", [g]))
        b.emit("zeros_like", [out], target=ctx.adjoint(out))
        g = g_now
    return g


def translate_backward(namer, info, grads, needs, loc):
    """The IR of the user's backward: (statements, returned values, location of its return)."""
    backward = info.cls.backward
    hints = {}
    taken = set(namer.taken)

    def attempt():
        namer.taken = set(taken)  # the same names again, so that type hints apply
        body = []
        tr = new_translator(BackwardTranslator, backward, namer, hints, list(info.hidden),
                            (), 0, body, loc)
        n_hidden = len(tr.hidden_params)
        bind_backward_parameters(tr, info, grads, needs, body)
        tr.statements(tr.src.node.body)
        if len(tr.hidden_params) != n_hidden:
            raise tr.error(f"backward of {info.name} reads a global array that adcompile could not pass "
                           "in; save it with ctx.save_for_backward or set it on ctx in forward")
        if tr.results is None:
            raise tr.error(f"backward of {info.name} must end with a return statement", tr.src.node)
        items, return_loc = tr.results
        return body, items, return_loc
    return until_types_settle(attempt, f"type inference of the backward of {info.name}")


def bind_backward_parameters(tr, info, grads, needs, body):
    signature = inspect.signature(info.cls.backward)
    params = list(signature.parameters.values())
    if not params:
        raise tr.error(f"backward of {info.name} must take ctx as its first parameter", tr.src.node)
    tr.env[params[0].name] = BackwardCtx(info, TupleValue([const(bool(n)) for n in needs]))
    remaining = list(grads)
    for param in params[1:]:
        if param.kind == param.VAR_POSITIONAL:
            tr.env[param.name] = TupleValue([local_copy(tr, param.name, g, body) for g in remaining])
            remaining = []
        elif remaining:
            tr.env[param.name] = local_copy(tr, param.name, remaining.pop(0), body)
        elif param.default is not param.empty:
            tr.env[param.name] = tr.global_value(param.default, param.name, tr.src.node)
        else:
            raise tr.error(f"backward of {info.name} takes more gradients than forward has outputs "
                           f"({len(grads)})", tr.src.node)
    if remaining:
        raise tr.error(f"backward of {info.name} must take one gradient per output of forward "
                       f"({len(grads)}), after ctx", tr.src.node)


def local_copy(tr, name, value, body):
    if not isinstance(value, Var):
        return value
    return local_parameter(tr, name, value, body)


def local_parameter(tr, name, value, body):
    """A variable of the rule's own for its parameter ``name`` given ``value``, assigned at the end
    of ``body``: of the wider type a loop of the rule gave it on an earlier round of type inference
    (an array of a narrower dtype converted), named ``name`` in messages."""
    fresh = tr.namer.fresh(name)
    local = Var(fresh, tr.hints.get(fresh, value.type))
    body.append(tr.assignment(local, value))
    tr.name_for(local, name)
    return local


def accumulate_gradients(ctx, info, needs, returned, loc, b):
    n = len(info.arguments)
    if len(returned) > n and any(not isinstance(g, NoneValue) for g in returned[n:]):
        raise located(AdCompileError, f"backward of {info.name} returned {len(returned)} gradients, but "
                      f"forward takes {n} input(s) ({', '.join(info.input_names)})", loc)
    for k, (name, arg) in enumerate(zip(info.input_names, info.arguments)):
        g = returned[k] if k < len(returned) else NONE
        if isinstance(g, NoneValue):
            continue  # no gradient (zero), as in PyTorch
        where = f"input '{name}' (position {k})"
        if not isinstance(arg, (Var, Const)):
            raise located(AdCompileError, f"backward of {info.name} returned a gradient for {where}, which "
                          "is not an array or a number; return None for it", loc)
        if not isinstance(g, (Var, Const)):
            raise located(AdCompileError, f"backward of {info.name} returned a {type(g).__name__} as the "
                          f"gradient of {where}; expected an array, a number or None", loc)
        if g.type.ndim != arg.type.ndim:
            raise located(AdCompileError, f"backward of {info.name} returned a gradient of the wrong shape "
                          f"for {where}: it has {g.type.ndim} dimension(s), the input has "
                          f"{arg.type.ndim}", loc)
        if needs[k]:
            if arg.type.ndim:  # checks the shape at run time; sums to it where the input has
                g = b.call("unbroadcast", g, arg)  # length 1, as PyTorch does
            ctx.accumulate(b, arg, g)


def remove_dead(body, accumulation, keep):
    """Drop assignments in ``body`` whose value nobody reads (gradients of inputs that need none),
    except those of the variables in ``keep``."""
    while True:
        read = {a for s in walk(body + accumulation) for a in s.reads() if isinstance(a, Var)}
        read |= {s.array for s in walk(body + accumulation) if isinstance(s, SetItem)}
        if not _prune(body, lambda s: isinstance(s, Assign) and s.target not in read and s.target not in keep):
            return


def _prune(block, dead):
    changed = False
    for stmt in list(block):
        if dead(stmt):
            block.remove(stmt)
            changed = True
            continue
        for inner in stmt.blocks():
            changed |= _prune(inner, dead)
        if isinstance(stmt, If) and not stmt.body and not stmt.orelse:
            block.remove(stmt)
            changed = True
    return changed
