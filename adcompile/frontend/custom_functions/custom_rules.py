"""``adcompile.custom_vjp`` functions in compiled code, and what ``custom_jvp`` shares with them.

A call ``f(x, y)`` of a ``custom_vjp`` function becomes a ``CustomCall``, as ``MyFn.apply`` does
(``call.py``): its region is ``f_fwd(x, y)`` inlined, whose first item is the output and second
the residuals; the residuals are copied into variables of their own at the end of the region
(so that in a loop the reverse transform saves exactly those), and the call's reverse rule
translates ``f_bwd(residuals, g)`` with the outputs' cotangents and adds the cotangents it
returns to the arguments' adjoints (``backward.py``, shared with custom Functions):

    # custom_vjp f (forward: f_fwd)              # grad of: z = f(x, y)
    _t = np.sin(x)                               # custom_vjp rule f_bwd of f
    f_out = _t * y                               g = bz
    f_res = np.cos(x)                            bx += f_res * g * y
    ...                                          by += f_res_1 * g

Inside its own rules, ``f(x, y)`` is ``f``'s code inlined (``f_fwd`` usually calls it). A
``custom_vjp`` without ``defvjp`` compiles, and differentiating it in reverse mode is an error
naming the call. The arguments are arrays, numbers or None.
"""
import inspect
import linecache

from ...custom.rules import custom_vjp
from ...errors import AdCompileError, Location, NoDerivativeRuleError, TypeMismatchError, located
from ...ir.builder import Builder
from ...ir.nodes import Const, CustomCall, Var
from ..extensions import register_classifier
from ..translator.inline import bind_arguments, inline_call
from ..translator.tables import until_types_settle
from ..values import NONE, NoneValue, TupleValue
from .backward import BackwardTranslator, backward_custom_call, local_copy, new_translator
from .call import keep, region_outputs, register_globals_of


# ---------------------------------------------------------------- shared with custom_jvp
def definition_location(fn):
    """The location of ``fn``'s ``def`` line (errors about a rule as a whole)."""
    code = fn.__code__
    line = linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")
    return Location(code.co_filename, code.co_firstlineno, None, line) if line else None


def inside_own_rule(tr, rule):
    """Whether ``tr`` translates one of ``rule``'s rules (then calling the function means its code)."""
    stack = getattr(tr, "call_stack", ()) + (getattr(tr, "local_function", None) or tr.pyfunc,)
    return any(fn in stack for fn in rule.rule_functions())


def call_inputs(tr, rule, args, kwargs, node):
    """(argument names, values) of the call, bound as Python binds them."""
    values = bind_arguments(tr, rule.fun, args, kwargs, node)
    inputs = []
    for name, value in values.items():
        if isinstance(value, Var) and value.type.dtype == "none":
            value = NONE
        if not isinstance(value, (Var, Const, NoneValue)):
            raise tr.error(f"the arguments of {rule.kind} function {rule.__name__} are arrays, numbers or None; "
                           f"'{name}' is a {type(value).__name__}", node, TypeMismatchError)
        inputs.append(value)
    return list(values), inputs


def translate_region(tr, fn, args, node):
    """``fn(*args)`` inlined into a block of its own: (block, returned value)."""
    block = []
    outer = tr.block, tr.builder
    tr.block, tr.builder = block, Builder(tr.namer, block, tr.loc)
    try:
        value = inline_call(tr, fn, args, {}, node)
    finally:
        tr.block, tr.builder = outer
    return block, value


def output_atoms(tr, value, what, node):
    """(atoms, is_tuple) of an output: an array or number, or a flat tuple of them."""
    items = value.items if isinstance(value, TupleValue) else [value]
    for item in items:
        if not isinstance(item, (Var, Const)) or item.type.dtype == "none":
            raise tr.error(f"{what} must return an array, a number or a flat tuple of them, not "
                           f"{type(item).__name__}", node, TypeMismatchError)
    return list(items), isinstance(value, TupleValue)


def finish_call(tr, info, block, atoms, is_tuple, kept):
    """Append the CustomCall of the region ``block``; the call's value (outputs, structured)."""
    outputs = region_outputs(tr, info.name, block, atoms, kept)
    inputs = [value for value in info.arguments if isinstance(value, (Var, Const))]
    tr.block.append(CustomCall(outputs, inputs, block, info, tr.loc))
    return TupleValue(outputs) if is_tuple else outputs[0]


def flattened(value):
    if isinstance(value, TupleValue):
        for item in value.items:
            yield from flattened(item)
    else:
        yield value


class CustomRuleInfo:
    """What the transforms need to know about one call of a ``custom_vjp``/``custom_jvp`` function."""

    non_differentiable = frozenset()
    materialize_grads = True  # an output without a cotangent gets zeros
    once_differentiable = False

    def __init__(self, rule, input_names, arguments, hidden, out_is_tuple, loc):
        self.rule = rule
        self.name = rule.__name__
        self.input_names = input_names
        self.arguments = arguments
        self.hidden = hidden  # (Var, array) of global arrays; shared with the function
        self.out_is_tuple = out_is_tuple
        self.loc = loc

    def __repr__(self):
        return self.name

    def no_rule(self, what):
        return located(NoDerivativeRuleError, f"{self.rule.kind} function {self.name} has no rule: call "
                       f"{self.name}.{what} before differentiating it", self.loc)


# ---------------------------------------------------------------- custom_vjp
class CustomVJPInfo(CustomRuleInfo):
    def __init__(self, rule, input_names, arguments, hidden, out_is_tuple, loc, residuals):
        super().__init__(rule, input_names, arguments, hidden, out_is_tuple, loc)
        self.residuals = residuals
        if rule.bwd is not None:
            self.backward_title = f"custom_vjp rule {rule.bwd.__name__} of {self.name}"

    def describe(self):
        fwd = self.rule.fwd
        return f"custom_vjp {self.name}" + (f" (forward: {fwd.__name__})" if fwd is not None else "")

    def reverse_rule(self, ctx, stmt, b):
        """The call's reverse rule: the user's ``bwd`` (``transforms/reverse/context.py``)."""
        if self.rule.bwd is None:
            raise self.no_rule("defvjp(fwd, bwd)")
        backward_custom_call(ctx, stmt, b)

    def translate_backward(self, namer, grads, needs, loc):
        """(statements, returned cotangents, location of bwd's return): ``bwd(residuals, g)``."""
        bwd, hints, taken = self.rule.bwd, {}, set(namer.taken)

        def attempt():
            namer.taken = set(taken)  # the same names again, so that type hints apply
            body = []
            tr = new_translator(BackwardTranslator, bwd, namer, hints, list(self.hidden), (), 0, body, loc)
            n_hidden = len(tr.hidden_params)
            params = list(inspect.signature(bwd).parameters.values())
            if len(params) != 2 or any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
                raise located(AdCompileError, f"{bwd.__name__}, the custom_vjp rule of {self.name}, must take two "
                              "arguments: (residuals, g)", definition_location(bwd))
            tr.env[params[0].name] = self.residuals
            cotangents = [local_copy(tr, params[1].name, g, body) for g in grads]
            tr.env[params[1].name] = TupleValue(cotangents) if self.out_is_tuple else cotangents[0]
            tr.statements(tr.src.node.body)
            if len(tr.hidden_params) != n_hidden:
                raise tr.error(f"{bwd.__name__} reads a global array that adcompile could not pass in; return it "
                               "among the residuals of the forward rule")
            if tr.results is None:
                raise tr.error(f"{bwd.__name__} must end with a return statement", tr.src.node)
            items, return_loc = tr.results
            if len(items) != len(self.arguments):
                raise located(AdCompileError, f"{bwd.__name__} returned {len(items)} cotangent(s), but custom_vjp "
                              f"function {self.name} takes {len(self.arguments)} argument(s) "
                              f"({', '.join(self.input_names)}): return a tuple with one cotangent per argument "
                              "(None for an argument without one)", return_loc)
            return body, items, return_loc
        return until_types_settle(attempt, f"type inference of {bwd.__name__}")


class CustomRuleRef:
    """A ``custom_vjp`` / ``custom_jvp`` function named in compiled code: called inside its own
    rule it is plain code (inlined); elsewhere a region with the rule (``compile_region``)."""

    def __init__(self, rule):
        self.rule = rule

    def compile_call(self, tr, args, kwargs, node):
        if inside_own_rule(tr, self.rule):
            return inline_call(tr, self.rule.fun, args, kwargs, node)
        names, inputs = call_inputs(tr, self.rule, args, kwargs, node)
        return self.compile_region(tr, names, inputs, node)


class CustomVJPRef(CustomRuleRef):
    """A ``custom_vjp`` function named in compiled code."""

    def compile_region(self, tr, names, inputs, node):
        rule = self.rule
        fwd = rule.fwd or rule.fun
        block, value = translate_region(tr, fwd, inputs, node)
        residuals = NONE
        if rule.fwd is not None:
            if not (isinstance(value, TupleValue) and len(value.items) == 2):
                raise located(TypeMismatchError, f"{fwd.__name__}, the forward rule of custom_vjp function "
                              f"{rule.__name__}, must return a pair (output, residuals)", definition_location(fwd))
            value, residuals = value.items
        atoms, is_tuple = output_atoms(tr, value, f"{fwd.__name__} (of custom_vjp {rule.__name__})", node)
        info = CustomVJPInfo(rule, names, inputs, tr.hidden_params, is_tuple, tr.loc, residuals)
        result = finish_call(tr, info, block, atoms, is_tuple, set(flattened(residuals)))
        info.residuals = keep(tr, residuals, block, f"{info.name}_res")
        if rule.bwd is not None:
            register_globals_of(tr, rule.bwd, node)
        return result


@register_classifier
def _classify(value):
    return CustomVJPRef(value) if isinstance(value, custom_vjp) else None
