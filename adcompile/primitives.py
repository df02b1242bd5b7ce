"""The primitive set: for each primitive its type rule and its Python/numba emission.

A primitive is what one IR ``Assign`` computes. The frontend lowers all numpy sugar onto
this small set (``np.square(x)`` is ``mul(x, x)``, ``x.mean(axis=0)`` is ``mean`` with a
static ``axis``), the transforms emit the same primitives, and the code generator turns each
into one Python expression through its template: ``_0``, ``_1`` ... stand for the arguments
and ``{name}`` for static parameters. Derivative rules live in ``rules/``, not here.
"""
from dataclasses import dataclass
from typing import Callable

from .errors import TypeMismatchError
from .ir.types import BOOL, F8, FLOAT64, I8, INT64, NONE_T, Type, promote_dtypes, to_float


@dataclass(frozen=True)
class Primitive:
    name: str
    type_rule: Callable  # (arg types, params) -> Type
    template: object  # str, or callable (arg types, params) -> str


PRIMITIVES = {}


def define(name, type_rule, template):
    PRIMITIVES[name] = Primitive(name, type_rule, template)


# ----------------------------------------------------------------- type rules
def _broadcast(types):
    ndim = max(t.ndim for t in types)
    return ndim


def elementwise(float_result=False):
    def rule(types, params, consts=None):
        consts = consts or [False] * len(types)
        strong = [t.dtype for t, c in zip(types, consts) if not c] or [t.dtype for t in types]
        weak = [t.dtype for t, c in zip(types, consts) if c]
        dtype = promote_dtypes(*strong)
        if any(w in ("f8", "f4") for w in weak) and dtype not in ("f8", "f4"):
            dtype = FLOAT64
        if float_result:
            dtype = to_float(dtype)
        return Type(dtype, _broadcast(types))
    return rule


def predicate(types, params, consts=None):
    return Type(BOOL, _broadcast(types))


def same_as_first(types, params, consts=None):
    return types[0]


def float_of_first(types, params, consts=None):
    return Type(to_float(types[0].dtype), types[0].ndim)


def reduction(types, params, consts=None):
    t = types[0]
    axis = params.get("axis")
    dtype = t.dtype if params.get("keep_dtype", True) else to_float(t.dtype)
    if t.dtype == BOOL:
        dtype = INT64
    return Type(dtype, 0 if axis is None else t.ndim - 1)


def float_reduction(types, params, consts=None):
    t = reduction(types, params)
    return Type(to_float(t.dtype), t.ndim)


def matmul_type(types, params, consts=None):
    a, b = types
    if a.ndim == 0 or b.ndim == 0:
        raise TypeMismatchError("matmul: operands must be arrays, not scalars")
    ndim = {(1, 1): 0, (2, 1): 1, (1, 2): 1, (2, 2): 2}.get((a.ndim, b.ndim))
    if ndim is None:
        raise TypeMismatchError(f"matmul of {a.ndim}-d and {b.ndim}-d arrays is not supported (1-d and 2-d only)")
    return Type(promote_dtypes(a.dtype, b.dtype), ndim)


def fixed(type_):
    return lambda types, params, consts=None: type_


def ndim_param(types, params, consts=None):
    return Type(params.get("dtype", FLOAT64), params["ndim"])


def getitem_type(types, params, consts=None):
    return Type(types[0].dtype, params["result_ndim"])


# ----------------------------------------------------------------- templates
def _args(n, first=0):
    return ", ".join(f"_{i}" for i in range(first, n))


def _shape_tuple(types, first=0, last=None):
    items = [f"_{i}" for i in range(first, len(types) if last is None else last)]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


BINARY_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**",
                    "floordiv": "//", "mod": "%"}
COMPARISONS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}

for _name, _op in BINARY_OPERATORS.items():
    define(_name, elementwise(float_result=_name == "div"), f"_0 {_op} _1")
for _name, _op in COMPARISONS.items():
    define(_name, predicate, f"_0 {_op} _1")

define("neg", same_as_first, "-_0")
define("not", predicate, lambda t, p: "not _0" if t[0].ndim == 0 else "np.logical_not(_0)")
define("and", predicate, lambda t, p: "_0 and _1" if max(x.ndim for x in t) == 0 else "np.logical_and(_0, _1)")
define("or", predicate, lambda t, p: "_0 or _1" if max(x.ndim for x in t) == 0 else "np.logical_or(_0, _1)")

# Unary float functions, emitted as numpy calls (numba compiles them for scalars and arrays).
UNARY_FLOAT = ["sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "exp",
               "expm1", "log", "log1p", "log2", "log10", "sqrt"]
for _name in UNARY_FLOAT:
    define(_name, float_of_first, f"np.{_name}(_0)")
define("abs", same_as_first, "np.abs(_0)")
define("sign", same_as_first, "np.sign(_0)")
for _name in ("floor", "ceil"):
    define(_name, float_of_first, f"np.{_name}(_0)")
define("round", float_of_first, lambda t, p: "np.round(_0, {decimals})" if p.get("decimals") else "np.round(_0)")
define("maximum", elementwise(), "np.maximum(_0, _1)")
define("minimum", elementwise(), "np.minimum(_0, _1)")
define("arctan2", elementwise(float_result=True), "np.arctan2(_0, _1)")
define("logaddexp", elementwise(float_result=True), "np.logaddexp(_0, _1)")
# Zero-safe products for derivative rules (runtime/nonfinite.py): 0 where the first is 0.
define("mul_nz", elementwise(float_result=True), "rt.mul_nz(_0, _1)")
define("div_nz", elementwise(float_result=True), "rt.div_nz(_0, _1)")
define("where", lambda t, p, c=None: elementwise()(t[1:], p, (c or [False] * 3)[1:]).with_ndim(max(x.ndim for x in t)),
       lambda t, p: "(_1 if _0 else _2)" if max(x.ndim for x in t) == 0 else "np.where(_0, _1, _2)")
define("clip", same_as_first,
       lambda t, p: "min(max(_0, _1), _2)" if t[0].ndim == 0 else "np.clip(_0, _1, _2)")

# Reductions: ``axis`` is None (everything, scalar result) or one non-negative int.
for _name in ("sum", "prod", "max", "min"):
    define(_name, reduction,
           lambda t, p, _n=_name: f"np.{_n}(_0)" if p.get("axis") is None else f"rt.{_n}_axis(_0, {{axis}})")
# Index-valued: the position of the largest/smallest element (flat, or along ``axis``), the
# sorting permutation of a 1-d array. Not differentiable; np.sort is x[argsort(x)].
for _name in ("argmax", "argmin"):
    define(_name, lambda t, p, c=None: Type(INT64, 0 if p.get("axis") is None else t[0].ndim - 1),
           lambda t, p, _n=_name: f"np.{_n}(_0)" if p.get("axis") is None else f"np.{_n}(_0, axis={{axis}})")
define("argsort", lambda t, p, c=None: Type(INT64, 1), "np.argsort(_0)")
define("mean", float_reduction,
       lambda t, p: "np.mean(_0)" if p.get("axis") is None else "rt.mean_axis(_0, {axis})")

define("matmul", matmul_type, "rt.matmul(_0, _1)")
define("outer", lambda t, p, c=None: Type(promote_dtypes(t[0].dtype, t[1].dtype), 2), "np.outer(_0, _1)")
define("transpose", same_as_first,
       lambda t, p: "_0.T" if p.get("axes") is None else "np.transpose(_0, {axes})")
define("reshape", lambda t, p, c=None: Type(t[0].dtype, len(t) - 1),
       lambda t, p: f"np.ascontiguousarray(_0).reshape({_shape_tuple(t, 1)})")
define("ravel", lambda t, p, c=None: Type(t[0].dtype, 1), "np.ascontiguousarray(_0).ravel()")
define("expand_axis", lambda t, p, c=None: Type(t[0].dtype, t[0].ndim + 1), "rt.expand_axis(_0, {axis})")
define("broadcast_to_shape", lambda t, p, c=None: Type(t[0].dtype, t[1].ndim), "rt.broadcast_to_shape(_0, _1)")
define("unbroadcast", lambda t, p, c=None: Type(t[0].dtype, t[1].ndim), "rt.unbroadcast(_0, _1)")
define("cast_like", lambda t, p, c=None: Type(t[1].dtype, t[0].ndim), "rt.cast_like(_0, _1)")
define("diag", lambda t, p, c=None: Type(t[0].dtype, 3 - t[0].ndim), "np.diag(_0)")
define("diag_adjoint", lambda t, p, c=None: t[1], "rt.diag_adjoint(_0, _1)")
define("trace", lambda t, p, c=None: Type(t[0].dtype, 0), "np.trace(_0)")
define("cumsum", lambda t, p, c=None: Type(t[0].dtype, 1), "np.cumsum(_0)")
define("cumsum_adjoint", same_as_first, "rt.cumsum_adjoint(_0)")
define("norm", lambda t, p, c=None: Type(to_float(t[0].dtype), 0), "np.linalg.norm(_0)")
define("concatenate", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), t[0].ndim),
       lambda t, p: f"np.concatenate(({_args(len(t))},), axis={{axis}})")
define("stack", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), t[0].ndim + 1),
       lambda t, p: f"np.stack(({_args(len(t))},), axis={{axis}})")

# Shapes and conversions.
define("dim", fixed(I8), "_0.shape[{axis}]")
define("size", fixed(I8), "_0.size")
define("to_float", lambda t, p, c=None: F8, "float(_0)")
define("to_int", fixed(I8), "int(_0)")
define("as_dtype", lambda t, p, c=None: Type(p["dtype"], t[0].ndim),
       lambda t, p: "np.{dtype_name}(_0)" if t[0].ndim == 0 else "_0.astype(np.{dtype_name})")
define("alias", same_as_first, "_0")
define("copy", same_as_first, lambda t, p: "_0.copy()" if t[0].ndim else "_0")

# Array creation; shapes are the int arguments, ``ndim`` and ``dtype`` are static.
_DT = "np.{dtype_name}"
define("zeros", ndim_param, lambda t, p: f"np.zeros({_shape_tuple(t)}, dtype={_DT})")
define("ones", ndim_param, lambda t, p: f"np.ones({_shape_tuple(t)}, dtype={_DT})")
define("empty", ndim_param, lambda t, p: f"np.empty({_shape_tuple(t)}, dtype={_DT})")
define("full", lambda t, p, c=None: Type(t[-1].dtype, len(t) - 1),
       lambda t, p: f"np.full({_shape_tuple(t, 0, len(t) - 1)}, _{len(t) - 1})")
define("zeros_like", lambda t, p, c=None: t[0] if t[0].dtype != INT64 or t[0].ndim else F8,
       lambda t, p: "np.zeros_like(_0)" if t[0].ndim else ("0.0" if t[0].dtype != "f4" else "np.float32(0.0)"))
define("ones_like", same_as_first, lambda t, p: "np.ones_like(_0)" if t[0].ndim else "1.0")
define("arange", lambda t, p, c=None: Type(promote_dtypes(*[x.dtype for x in t]), 1),
       lambda t, p: f"np.arange({_args(len(t))})")
define("linspace", lambda t, p, c=None: Type(FLOAT64, 1), "np.linspace(_0, _1, _2)")
define("eye", lambda t, p, c=None: Type(FLOAT64, 2), "np.eye(_0)")
define("getitem", getitem_type, lambda t, p: "_0[" + p["text"] + "]")

# Reverse-mode bookkeeping.
define("placeholder", lambda t, p, c=None: p["type"], lambda t, p: placeholder_text(p["type"]))
define("new_tape", fixed(NONE_T), "rt.new_tape(_0)")
define("range_len", fixed(I8), "rt.range_len(_0, _1, _2)")


def placeholder_text(type_):
    """Source of a value of ``type_`` used to give a not-yet-assigned variable its type."""
    from .ir.types import NUMPY_DTYPE_NAME
    if type_.ndim == 0:
        return {"f8": "0.0", "f4": "np.float32(0.0)", "i8": "0", "b1": "False"}[type_.dtype]
    zeros = "(" + ", ".join(["0"] * type_.ndim) + ("," if type_.ndim == 1 else "") + ")"
    return f"np.empty({zeros}, dtype={NUMPY_DTYPE_NAME[type_.dtype]})"


def result_type(prim, arg_types, params, consts=None):
    try:
        spec = PRIMITIVES[prim]
    except KeyError:
        raise KeyError(f"unknown primitive {prim!r}") from None
    try:
        return spec.type_rule(arg_types, params, consts)
    except TypeError:
        return spec.type_rule(arg_types, params)


def template_for(prim, arg_types, params):
    """The expression template of ``prim`` with static parameters substituted."""
    from .ir.types import NUMPY_DTYPE_NAME
    spec = PRIMITIVES[prim]
    text = spec.template(arg_types, params) if callable(spec.template) else spec.template
    if "{" in text:
        fields = dict(params)
        if "dtype" in params:
            fields["dtype_name"] = NUMPY_DTYPE_NAME[params["dtype"]].split(".")[1]
        text = text.format(**fields)
    return text
