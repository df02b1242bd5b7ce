"""Seeded generator of random numpy programs in adcompile's supported language.

``generate(seed)`` returns a ``Program``: the source text of a module (helpers, custom
Functions and an entry function ``f``) and concrete arguments. Programs are well typed by
construction (every value has a concrete shape known to the generator) and numerically benign:
only smooth operations, with a static bound on every value's magnitude so that ``exp`` never
sees large arguments, ``log`` and ``sqrt`` only see values kept away from zero, and loops run
at most a few times. Kinks and branch switches near the sample point are not prevented here;
the oracle discards programs whose finite differences are not self-consistent.
"""
import ast
import random
import re
from dataclasses import dataclass, field

import numpy as np

from .coverage_forms import coverage_form
from .custom_functions import CUSTOM_FUNCTIONS
from .loop_forms import loop_construct
from .numerics import noncontiguous

LIMIT = 20.0
VIEW = re.compile(r"^([A-Za-z_]\w*)(\[[^(]*\]|\.T)?$")  # largest bound a value may reach before only contracting operations are used


@dataclass
class Var:
    shape: tuple
    bound: float
    writable: bool = False  # an array the program owns (no other name shares its memory)
    is_int: bool = False


@dataclass
class Program:
    source: str
    args: tuple
    arg_names: tuple
    seed: int
    returns: str = "scalar"  # "scalar", "array" or "tuple"
    features: set = field(default_factory=set)
    dtype: str = "float64"  # of the array arguments

    @property
    def float_arg_indices(self):
        return tuple(k for k, a in enumerate(self.args) if not isinstance(a, int))


@dataclass
class Loop:
    index: str
    max_index: int  # largest value the index takes (0 if the loop may not run)
    trips: int


class Scope:
    """The variables visible at a point of the program being written."""

    def __init__(self, variables=None):
        self.vars = dict(variables or {})

    def copy(self):
        return Scope({k: Var(v.shape, v.bound, v.writable, v.is_int) for k, v in self.vars.items()})

    def floats(self, shape=None):
        return [k for k, v in self.vars.items() if not v.is_int and (shape is None or v.shape == shape)]


def fmt(value):
    return repr(round(float(value), 2))


class ProgramGenerator:
    def __init__(self, seed, returns=None, max_statements=None):
        self.seed = seed
        self.rng = random.Random(seed)
        self.coverage_rng = random.Random(seed + 0x14)  # whether to use an issue-14 form (leaves rng as it was)
        self.construct_rng = random.Random(seed + 0x21)  # loop constructs of loop_forms.py, likewise
        self.layout_rng = random.Random(seed + 0x22)  # which arguments are passed non-contiguous
        self.in_construct = False
        self.dtype = "float32" if random.Random(seed + 0x32).random() < 0.15 else "float64"
        self.data = np.random.default_rng(seed)
        self.features = set()
        self.lines = []
        self.depth = 0
        self.loops = []
        self.counter = 0
        self.custom_used = set()
        self.helpers = []  # (name, source text, param shapes, result shape or tuple of shapes)
        self.returns = returns or self.rng.choices(["scalar", "array", "tuple"], [0.85, 0.08, 0.07])[0]
        self.max_statements = max_statements or self.rng.randint(3, 9)
        self.in_helper = False
        self.view_helpers = set()  # helpers that may return (a view of) their argument

    # ------------------------------------------------------------------ small utilities
    def chance(self, p):
        return self.rng.random() < p

    def pick(self, items):
        return self.rng.choice(items)

    def fresh_name(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, line):
        self.lines.append("    " * self.depth + line)

    def trips_multiplier(self):
        m = 1
        for loop in self.loops:
            m *= max(loop.trips, 1)
        return m

    # ------------------------------------------------------------------ arguments
    def make_arguments(self):
        n = self.rng.randint(2, 4)
        m = self.rng.randint(2, 4)
        self.sizes = (n, m)
        params = []
        if self.chance(0.85):
            params.append(("x", (n,)))
        if self.chance(0.5):
            params.append(("A", (n, m)))
        if self.chance(0.35):
            params.append(("y", (m,)))
        if self.chance(0.55) or not params:
            params.append(("a", ()))
        if self.chance(0.5):
            params.append(("b", ()))
        self.rng.shuffle(params)
        args, names = [], []
        scope = Scope()
        for name, shape in params:
            if shape:
                value = self.data.uniform(-1.0, 1.0, shape).astype(self.dtype)
            else:
                value = float(self.data.uniform(-1.0, 1.0))
            if shape and self.layout_rng.random() < 0.15:
                how = self.layout_rng.choice(["strided", "transposed"] if len(shape) == 2 else ["strided"])
                value = noncontiguous(value, how)
                self.features.add("noncontiguous_argument")
            args.append(value)
            names.append(name)
            scope.vars[name] = Var(shape, 1.0, writable=False)
        if self.chance(0.6):
            value = self.rng.randint(0, min(n, m) if self.chance(0.5) else n)
            args.append(value)
            names.append("n")
            scope.vars["n"] = Var((), value, is_int=True)
            self.features.add("int_arg")
        return tuple(args), tuple(names), scope

    # ------------------------------------------------------------------ expressions
    def expr(self, scope, shape, depth):
        """(text, bound) of an expression of ``shape`` over the variables in ``scope``."""
        if depth <= 0 or self.chance(0.25):
            return self.leaf(scope, shape)
        makers = [self.binary, self.binary, self.unary, self.unary]
        if shape == ():
            makers += [self.reduction, self.reduction, self.dot]
        elif len(shape) == 1:
            makers += [self.matvec, self.axis_reduction, self.concat]
        else:
            makers += [self.outer, self.centred, self.transposed]
        if not self.in_helper and self.helpers_for(shape):
            makers.append(self.helper_call)
        if self.chance(0.08):
            makers.append(self.custom_call)
        if self.chance(0.05):
            makers.append(self.kinked)
        made = None
        for _ in range(4):
            made = self.pick(makers)(scope, shape, depth)
            if made is not None and made[1] <= LIMIT * 5:
                break
        else:
            made = self.leaf(scope, shape)
        return self.maybe_coverage(scope, shape, depth, made)

    def maybe_coverage(self, scope, shape, depth, made):
        """``made``, or in its place an expression of the numpy of issue 14. That one is drawn
        from its own random stream, after ``made``: the programs keep the structure they had
        before these forms existed (the same draws of ``rng``), with some expressions replaced."""
        if self.coverage_rng.random() >= 0.1:
            return made
        saved, self.rng = self.rng, self.coverage_rng
        try:
            form = coverage_form(self, scope, shape, depth)
        finally:
            self.rng = saved
        return form if form is not None and form[1] <= LIMIT * 5 else made

    def leaf(self, scope, shape):
        options = []
        same = scope.floats(shape)
        options += [(lambda name=name: (name, scope.vars[name].bound)) for name in same]
        options += [(lambda name=name: (name, scope.vars[name].bound)) for name in same]
        for name in scope.floats():
            var = scope.vars[name]
            for text in self.views_of(name, var.shape, shape):
                options.append(lambda text=text, b=var.bound: (text, b))
        if shape == ():
            options.append(lambda: (fmt(self.rng.choice([-1, 1]) * self.rng.uniform(0.2, 1.5)), 1.5))
            for loop in self.loops:
                options.append(lambda loop=loop: (f"(0.25 * {loop.index})", 0.25 * loop.max_index))
        if not options or (len(shape) > 0 and self.chance(0.05)):
            return self.constructor(scope, shape)
        return self.pick(options)()

    def views_of(self, name, have, want):
        """Index expressions on variable ``name`` (shape ``have``) giving shape ``want``."""
        out = []
        if len(have) == 1:
            (k,) = have
            if want == ():
                i = self.rng.randrange(k)
                out.append(f"{name}[{i}]")
                out.append(f"{name}[{i - k}]")
                for loop in self.loops:
                    if loop.max_index < k:
                        out.append(f"{name}[{loop.index}]")
                        out.append(f"{name}[{loop.index}]")
                    if loop.max_index + 1 < k:
                        out.append(f"{name}[{loop.index} + 1]")
                    if loop.max_index < k:
                        out.append(f"{name}[-1 - {loop.index}]")
            elif len(want) == 1:
                (length,) = want
                if length < k:
                    start = self.rng.randint(0, k - length)
                    out.append(f"{name}[{start}:{start + length}]")
                    out.append(f"{name}[:{length}]" if self.chance(0.5) else f"{name}[{k - length}:]")
                    out.append(f"{name}[-{length}:]")
                    self.features.add("slice")
                if length == k:
                    out.append(f"{name}[::-1]")
                    self.features.add("negative_stride")
                if (k + 1) // 2 == length and k > 1:
                    out.append(f"{name}[::2]")
                    self.features.add("strided_slice")
                if self.chance(0.3):
                    idx = [self.rng.randrange(k) for _ in range(length)]
                    out.append(f"{name}[np.array({idx})]")
                    self.features.add("gather")
        elif len(have) == 2:
            r, c = have
            if want == ():
                out.append(f"{name}[{self.rng.randrange(r)}, {self.rng.randrange(c) - c}]")
                for loop in self.loops:
                    if loop.max_index < r:
                        out.append(f"{name}[{loop.index}, {self.rng.randrange(c)}]")
            elif want == (c,):
                out.append(f"{name}[{self.rng.randrange(r)}]")
                out.append(f"{name}[{self.rng.randrange(r) - r}, :]")
                for loop in self.loops:
                    if loop.max_index < r:
                        out.append(f"{name}[{loop.index}]")
                        out.append(f"{name}[{loop.index}]")
                self.features.add("row_read")
            elif want == (r,):
                out.append(f"{name}[:, {self.rng.randrange(c)}]")
                for loop in self.loops:
                    if loop.max_index < c:
                        out.append(f"{name}[:, {loop.index}]")
                self.features.add("column_read")
            elif len(want) == 1 and want[0] < c:
                out.append(f"{name}[{self.rng.randrange(r)}, {c - want[0]}:]")
            elif want == (c, r):
                out.append(f"{name}.T")
            elif want == have:
                out.append(f"{name}[::-1]" if self.chance(0.5) else f"{name}[:, ::-1]")
            elif len(want) == 2 and want[0] <= r and want[1] <= c:
                out.append(f"{name}[:{want[0]}, {c - want[1]}:]")
        return out

    def constructor(self, scope, shape):
        self.features.add("constructor")
        if len(shape) == 1:
            (k,) = shape
            s, b = self.leaf(scope, ())
            return self.pick([(f"np.linspace(-0.5, 0.5, {k})", 0.5),
                              (f"(np.ones({k}) * {s})", b),
                              (f"(0.25 * np.arange({k}))", 0.25 * k)])
        r, c = shape
        options = [(f"np.ones(({r}, {c}))", 1.0), (f"np.full(({r}, {c}), 0.5)", 0.5)]
        if r == c:
            options.append((f"(0.5 * np.eye({r}))", 0.5))
        return self.pick(options)

    def operand(self, scope, shape, depth):
        """An operand of an elementwise operation on ``shape``: the same shape or broadcast."""
        if shape and self.chance(0.25):
            self.features.add("broadcast")
            if len(shape) == 2 and self.chance(0.5):
                text, b = self.expr(scope, (shape[0],), depth)
                return f"({text})[:, None]", b
            sub = () if len(shape) == 1 or self.chance(0.5) else (shape[1],)
            return self.expr(scope, sub, depth)
        return self.expr(scope, shape, depth)

    def binary(self, scope, shape, depth):
        left, lb = self.expr(scope, shape, depth - 1)
        right, rb = self.operand(scope, shape, depth - 1)
        if self.chance(0.5):
            left, lb, right, rb = right, rb, left, lb
        ops = ["+", "-"]
        if lb * rb <= LIMIT:
            ops += ["*", "*"]
        op = self.pick(ops)
        if self.chance(0.12):
            denom = self.pick([f"(1.0 + {right} ** 2)", f"(2.0 + np.cos({right}))"])
            return f"({left} / {denom})", lb
        bound = lb * rb if op == "*" else lb + rb
        return f"({left} {op} {right})", bound

    def unary(self, scope, shape, depth):
        inner, b = self.expr(scope, shape, depth - 1)
        options = [(f"np.sin({inner})", min(b, 1.0)), (f"np.cos({inner})", 1.0),
                   (f"np.tanh({inner})", min(b, 1.0)), (f"(-{inner})", b),
                   (f"np.log(1.0 + {inner} ** 2)", np.log1p(b * b)),
                   (f"np.sqrt(1.0 + {inner} * {inner})", np.sqrt(1 + b * b))]
        if b <= 2.5:
            options.append((f"np.exp({inner})", float(np.exp(b))))
        if b <= 4:
            options.append((f"({inner} ** 2)", b * b))
            options.append((f"np.square({inner})", b * b))
        if b <= 2:
            options.append((f"({inner} ** 3)", b ** 3))
        return self.pick(options)

    def kinked(self, scope, shape, depth):
        """Operations with a kink; the finite-difference self-check discards ties."""
        self.features.add("kink")
        inner, b = self.expr(scope, shape, depth - 1)
        other, ob = self.expr(scope, shape, depth - 1)
        return self.pick([(f"np.abs({inner})", b), (f"np.maximum({inner}, {other})", max(b, ob)),
                          (f"np.where({inner} > 0.0, {inner}, 0.5 * {other})", max(b, ob)),
                          (f"np.clip({inner}, -0.5, 0.5)", min(b, 0.5))])

    def reduction(self, scope, shape, depth):
        src = self.pick([(self.rng.randint(1, 4),), (self.rng.randint(2, 3), self.rng.randint(2, 3))])
        src = self.existing_shape(scope, src)
        inner, b = self.expr(scope, src, depth - 1)
        size = int(np.prod(src))
        self.features.add("reduction")
        options = [(f"np.sum({inner})", b * size), (f"np.mean({inner})", b)]
        if inner.isidentifier():
            options += [(f"{inner}.sum()", b * size), (f"{inner}.mean()", b)]
        if self.chance(0.15):
            options.append((f"np.max({inner})", b))
            self.features.add("max")
        return self.pick(options)

    def existing_shape(self, scope, fallback):
        shapes = [v.shape for v in scope.vars.values() if v.shape and not v.is_int]
        return self.pick(shapes) if shapes and self.chance(0.8) else fallback

    def dot(self, scope, shape, depth):
        vec = self.existing_shape(scope, (3,))
        if len(vec) != 1:
            vec = (vec[0],)
        left, lb = self.expr(scope, vec, depth - 1)
        right, rb = self.expr(scope, vec, depth - 1)
        self.features.add("matmul")
        if lb * rb * vec[0] > LIMIT * 5:
            return None
        form = self.pick(["{} @ {}", "np.dot({}, {})"])
        return f"({form.format(left, right)})", lb * rb * vec[0]

    def matvec(self, scope, shape, depth):
        (k,) = shape
        other = self.rng.randint(2, 4)
        for v in scope.vars.values():
            if len(v.shape) == 2 and k in v.shape and self.chance(0.7):
                other = v.shape[1] if v.shape[0] == k else v.shape[0]
        if self.chance(0.5):
            mat, mb = self.expr(scope, (k, other), depth - 1)
            vec, vb = self.expr(scope, (other,), depth - 1)
            text = f"({mat} @ {vec})"
        else:
            mat, mb = self.expr(scope, (other, k), depth - 1)
            vec, vb = self.expr(scope, (other,), depth - 1)
            text = f"({vec} @ {mat})"
        self.features.add("matmul")
        return text, mb * vb * other

    def axis_reduction(self, scope, shape, depth):
        (k,) = shape
        other = self.rng.randint(2, 3)
        axis = self.rng.randint(0, 1)
        src = (other, k) if axis == 0 else (k, other)
        inner, b = self.expr(scope, src, depth - 1)
        self.features.add("axis_reduction")
        func = self.pick(["sum", "mean"])
        bound = b * other if func == "sum" else b
        if inner.isidentifier() and self.chance(0.5):
            return f"{inner}.{func}(axis={axis})", bound
        return f"np.{func}({inner}, axis={axis})", bound

    def concat(self, scope, shape, depth):
        (k,) = shape
        if k < 2:
            return None
        cut = self.rng.randint(1, k - 1)
        left, lb = self.expr(scope, (cut,), depth - 1)
        right, rb = self.expr(scope, (k - cut,), depth - 1)
        self.features.add("concatenate")
        return f"np.concatenate(({left}, {right}))", max(lb, rb)

    def outer(self, scope, shape, depth):
        r, c = shape
        left, lb = self.expr(scope, (r,), depth - 1)
        right, rb = self.expr(scope, (c,), depth - 1)
        self.features.add("outer")
        return f"np.outer({left}, {right})", lb * rb

    def centred(self, scope, shape, depth):
        names = scope.floats(shape)
        if not names:
            return None
        name = self.pick(names)
        b = scope.vars[name].bound
        axis = self.rng.randint(0, 1)
        func = self.pick(["mean", "sum"])
        self.features.add("keepdims")
        factor = shape[axis] if func == "sum" else 1
        op = self.pick(["-", "*"])
        if op == "*" and b * b * factor > LIMIT:
            op = "-"
        bound = b * b * factor if op == "*" else b + b * factor
        return f"({name} {op} {name}.{func}(axis={axis}, keepdims=True))", bound

    def transposed(self, scope, shape, depth):
        inner, b = self.expr(scope, (shape[1], shape[0]), depth - 1)
        if inner.isidentifier():
            return f"{inner}.T", b
        return f"np.transpose({inner})", b

    def custom_call(self, scope, shape, depth):
        name = self.pick(sorted(CUSTOM_FUNCTIONS))
        _, n_inputs, bound_of = CUSTOM_FUNCTIONS[name]
        inner, b = self.expr(scope, shape, depth - 1)
        if (name == "Cube" and b > 2) or (name == "Softplus" and b > 5):
            return None
        self.custom_used.add(name)
        self.features.add("custom_function")
        if name == "SinTimes":
            other, ob = self.expr(scope, shape, depth - 1)
            return f"SinTimes.apply({inner}, {other})", ob
        if name == "ScaledTanh":
            return f"ScaledTanh.apply({inner}, {fmt(self.rng.uniform(0.3, 1.5))})", 1.0
        return f"{name}.apply({inner})", bound_of(b)

    # ------------------------------------------------------------------ helpers
    def helpers_for(self, shape):
        return [h for h in self.helpers if h[3] == shape]

    def helper_call(self, scope, shape, depth):
        name, _, params, result, has_keyword = self.pick(self.helpers_for(shape))
        parts = []
        bound = 1.0
        for p_shape in params:
            text, b = self.expr(scope, p_shape, depth - 1)
            parts.append(text)
            bound = max(bound, b)
        if bound > 3:
            return None
        if has_keyword and self.chance(0.7):
            parts.append(f"scale={fmt(self.rng.uniform(0.2, 0.9))}")
            self.features.add("keyword_argument")
        self.features.add("helper_call")
        return f"{name}({', '.join(parts)})", 10.0

    def make_helper(self):
        """A module-level helper with bounded inputs; returns its source lines."""
        name = f"helper{len(self.helpers) + 1}"
        n = self.sizes[0]
        shapes = [self.pick([(), (n,), (n,), self.sizes])]
        if self.chance(0.5):
            shapes.append(self.pick([(), (n,)]))
        result = self.pick([(), (), shapes[0]])
        saved = (self.lines, self.depth, self.loops, self.in_helper)
        self.lines, self.depth, self.loops, self.in_helper = [], 1, [], True
        scope = Scope({f"p{k}": Var(s, 3.0) for k, s in enumerate(shapes)})
        has_keyword = self.chance(0.6)
        if has_keyword:
            scope.vars["scale"] = Var((), 1.0)
        for _ in range(self.rng.randint(0, 2)):
            self.statement(scope, allow_blocks=self.chance(0.5))
        text, b = self.expr(scope, result, 2)
        if b > 10:
            text = f"np.tanh({text})"
        if result == () and self.chance(0.25):
            cond, _ = self.expr(scope, (), 1)
            early, eb = self.expr(scope, (), 1)
            self.emit(f"if {cond} > {fmt(self.rng.uniform(-0.5, 0.5))}:")
            self.emit(f"    return {early if eb <= 10 else f'np.tanh({early})'}")
            self.features.add("early_return_in_helper")
        self.emit(f"return {text}")
        if VIEW.match(text):
            self.view_helpers.add(name)
        params = [f"p{k}" for k in range(len(shapes))]
        if has_keyword:
            params.append(f"scale={fmt(self.rng.uniform(0.2, 0.9))}")
        body = [f"def {name}({', '.join(params)}):"] + self.lines
        self.lines, self.depth, self.loops, self.in_helper = saved
        self.helpers.append((name, "\n".join(body), shapes, result, has_keyword))

    # ------------------------------------------------------------------ statements
    def statement(self, scope, allow_blocks=True):
        kinds = ["assign", "assign", "update", "update", "write", "write", "write", "copy"]
        if allow_blocks and len(self.loops) < 2:
            kinds += ["for", "for", "if", "while"]
        if len(scope.floats()) >= 2:
            kinds.append("unpack")
        if self.loops:
            kinds += ["jump"]
        if self.returns == "scalar" and not self.in_helper and self.chance(0.15):
            kinds.append("early_return")
        if self.chance(0.05):
            kinds.append("alias")
        getattr(self, "stmt_" + self.pick(kinds))(scope)
        self.maybe_construct(scope, allow_blocks)

    def maybe_construct(self, scope, allow_blocks):
        """After a statement, sometimes one of ``loop_forms.py``'s constructs, drawn from its
        own random stream (so that the rest of the program is drawn as before)."""
        if self.in_helper or self.in_construct or not allow_blocks or len(self.loops) >= 2:
            return
        if self.construct_rng.random() >= 0.18:
            return
        saved, self.rng, self.in_construct = self.rng, self.construct_rng, True
        try:
            loop_construct(self, scope)
        finally:
            self.rng, self.in_construct = saved, False

    def block(self, scope, count, allow_blocks=True):
        if count == 0:
            self.emit("pass")
        for _ in range(count):
            self.statement(scope, allow_blocks)

    def random_shape(self):
        n, m = self.sizes
        return self.pick([(), (), (n,), (n,), (m,), (n, m), (self.rng.randint(1, n),)])

    def stmt_assign(self, scope):
        shape = self.random_shape()
        text, b = self.expr(scope, shape, self.rng.randint(1, 3))
        if b > LIMIT:
            text, b = f"np.tanh({text})", 1.0
        name = self.fresh_name("s" if shape == () else ("v" if len(shape) == 1 else "M"))
        self.emit(f"{name} = {text}")
        scope.vars[name] = Var(shape, b, writable=self.owns_memory(scope, text))

    def owns_memory(self, scope, text):
        """Whether an array assigned from ``text`` is new memory; a view or alias of a variable
        makes that variable read-only for the rest of the program (writing into an array while
        a view of it is alive is a documented rejection)."""
        if any(text.startswith(name + "(") for name in self.view_helpers):
            return False
        match = VIEW.match(text)
        if match is None:
            return True
        base = scope.vars.get(match.group(1))
        if base is not None:
            base.writable = False
        return False

    def stmt_copy(self, scope):
        arrays = [k for k in scope.floats() if scope.vars[k].shape]
        n, m = self.sizes
        name = self.fresh_name("w" if self.chance(0.7) else "W")
        if arrays and self.chance(0.7):
            src = self.pick(arrays)
            shape = scope.vars[src].shape
            text = self.pick([f"{src}.copy()", f"np.copy({src})", f"{src}.copy()"])
            b = scope.vars[src].bound
            self.features.add("copy")
        else:
            shape = self.pick([(n,), (m,), (n, m)])
            dims = shape[0] if len(shape) == 1 else f"({shape[0]}, {shape[1]})"
            text = self.pick([f"np.zeros({dims})", f"np.ones({dims})"])
            b = 1.0
        self.emit(f"{name} = {text}")
        scope.vars[name] = Var(shape, b, writable=True)

    def stmt_update(self, scope):
        names = [k for k in scope.floats() if k not in {l.index for l in self.loops}]
        if not names:
            return self.stmt_assign(scope)
        name = self.pick(names)
        var = scope.vars[name]
        rhs, rb = self.operand(scope, var.shape, self.rng.randint(1, 2))
        times = self.trips_multiplier()
        forms = []
        # whole-array augmented assignment writes into memory: only into arrays the program owns
        in_place = not var.shape or var.writable
        if var.bound + times * rb <= LIMIT:
            forms += [(f"{name} = {name} + {rhs}", var.bound + times * rb),
                      (f"{name} = {rhs} - {name}", var.bound + times * rb)]
            if in_place:
                forms += [(f"{name} += {rhs}", var.bound + times * rb),
                          (f"{name} -= {rhs}", var.bound + times * rb)]
        if rb <= 1.0:
            forms += [(f"{name} = {name} * {rhs}", var.bound)]
            if in_place:
                forms += [(f"{name} *= {rhs}", var.bound)]
        forms += [(f"{name} = np.tanh({name} + {rhs})", 1.0),
                  (f"{name} = 0.5 * {name} + np.sin({rhs})", var.bound + 2.0),
                  (f"{name} = np.sin({rhs}) + 0.5 * {name}", var.bound + 2.0)]
        line, bound = self.pick(forms)
        if "+=" in line or "*=" in line or "-=" in line:
            self.features.add("augmented_assignment" if not var.shape else "array_augmented_assignment")
        self.emit(line)
        var.bound = bound
        if self.loops:
            self.features.add("loop_carried_" + ("scalar" if not var.shape else "array"))

    def stmt_alias(self, scope):
        arrays = [k for k in scope.floats() if scope.vars[k].shape]
        if not arrays:
            return self.stmt_assign(scope)
        src = self.pick(arrays)
        name = self.fresh_name("t")
        self.emit(f"{name} = {src}")
        var = scope.vars[src]
        var.writable = False
        scope.vars[name] = Var(var.shape, var.bound, writable=False)
        self.features.add("alias")

    def stmt_unpack(self, scope):
        self.features.add("tuple_unpacking")
        if self.chance(0.3) and any(isinstance(h[3], tuple) for h in self.helpers):
            pass
        shapes = [self.random_shape(), self.random_shape()]
        parts = [self.expr(scope, s, self.rng.randint(1, 2)) for s in shapes]
        names = [self.fresh_name("p" if not s else "u") for s in shapes]
        texts = []
        for (text, b), s, name in zip(parts, shapes, names):
            if b > LIMIT:
                text, b = f"np.tanh({text})", 1.0
            texts.append(text)
            scope.vars[name] = Var(s, b, writable=self.owns_memory(scope, text))
        self.emit(f"{names[0]}, {names[1]} = {texts[0]}, {texts[1]}")
        if self.loops and self.chance(0.4):
            # loop-carried tuple: swap-and-mix of two existing values
            pass

    def stmt_write(self, scope):
        targets = [k for k in scope.floats() if scope.vars[k].shape and scope.vars[k].writable]
        if not targets:
            if self.chance(0.1) and not self.in_helper:
                targets = [k for k in scope.floats() if scope.vars[k].shape]
                self.features.add("write_into_argument")
            if not targets:
                return self.stmt_copy(scope)
        name = self.pick(targets)
        var = scope.vars[name]
        index, shape = self.write_index(var.shape)
        rhs, rb = self.expr(scope, shape, self.rng.randint(0, 2))
        if self.chance(0.5):
            # the value read from the array being written, left or right of the other operand
            own = self.read_back(name, var.shape, index, shape)
            func = self.pick(["", "np.sin", "np.cos", "np.tanh", ""])
            own_text = f"{func}({own})" if func else own
            op = self.pick(["+", "-", "*"]) if rb <= 2 else self.pick(["+", "-"])
            rhs = f"({own_text} {op} {rhs})" if self.chance(0.5) else f"({rhs} {op} {own_text})"
            rb = var.bound * rb if op == "*" else var.bound + rb
            self.features.add("write_reads_target")
        augmented = self.chance(0.25)
        bound = var.bound + rb * self.trips_multiplier() if augmented else max(var.bound, rb)
        if bound > LIMIT:
            rhs, rb = f"np.tanh({rhs})", 1.0
            bound = var.bound + self.trips_multiplier() if augmented else max(var.bound, 1.0)
        if bound > LIMIT:
            augmented = False
            bound = max(var.bound, 1.0)
        target = f"{name}[{index}]"
        if self.chance(0.03) and len(var.shape) == 2 and shape == ():
            i, j = index.split(", ")
            target = f"{name}[{i}][{j}]"
            self.features.add("chained_index_write")
        self.emit(f"{target} {'+=' if augmented else '='} {rhs}")
        var.bound = bound
        self.features.add("write_" + ("element" if shape == () else "slice" if ":" in index else "row"))
        if augmented:
            self.features.add("augmented_write")

    def write_index(self, shape):
        """(index text, shape of the written region) for a write into an array of ``shape``."""
        loop_indices = [l for l in self.loops if l.max_index < shape[0]]
        if len(shape) == 1:
            (k,) = shape
            options = [(str(self.rng.randrange(k)), ()), (str(self.rng.randrange(k) - k), ())]
            for loop in loop_indices:
                options += [(loop.index, ())] * 2
            if k > 1:
                start = self.rng.randint(1, k - 1)
                options += [(f"{start}:", (k - start,)), (f":{start}", (start,)), (":", (k,)),
                             ("::2", ((k + 1) // 2,)), (f"-{start}:", (start,))]
            return self.pick(options)
        r, c = shape
        options = [(f"{self.rng.randrange(r)}, {self.rng.randrange(c)}", ()),
                   (f"{self.rng.randrange(r)}", (c,)),
                   (f":, {self.rng.randrange(c)}", (r,)),
                   (f"{self.rng.randrange(r) - r}, 1:", (c - 1,))]
        for loop in loop_indices:
            options += [(f"{loop.index}", (c,)), (f"{loop.index}, {self.rng.randrange(c)}", ())]
        if r > 1:
            options.append(("1:", (r - 1, c)))
        return self.pick(options)

    def read_back(self, name, shape, index, want):
        """A read of ``name`` with shape ``want``: the written region itself or a shifted one."""
        if self.chance(0.6):
            return f"{name}[{index}]"
        options = self.views_of(name, shape, want)
        return self.pick(options) if options else f"{name}[{index}]"

    # ------------------------------------------------------------------ control flow
    def condition(self, scope):
        """A comparison on data (never on constants alone)."""
        for _ in range(4):
            text, b = self.expr(scope, (), self.rng.randint(0, 2))
            if set(re.findall(r"[A-Za-z_]\w*", text)) & set(scope.floats()):
                break
        threshold = fmt(self.rng.uniform(-0.5, 0.5) * min(b, 2.0))
        return f"{text} {self.pick(['>', '<'])} {threshold}"

    def merge_bounds(self, scope, inner):
        for k, v in scope.vars.items():
            if k in inner.vars:
                v.bound = max(v.bound, inner.vars[k].bound)
                v.writable = v.writable and inner.vars[k].writable

    def stmt_if(self, scope):
        self.features.add("branch")
        if self.loops and self.chance(0.3):
            loop = self.pick(self.loops)
            self.emit(f"if {loop.index} % 2 == 0:" if self.chance(0.5) else f"if {loop.index} == 1:")
        else:
            self.emit(f"if {self.condition(scope)}:")
        self.depth += 1
        then = scope.copy()
        self.block(then, self.rng.randint(1, 2))
        self.depth -= 1
        self.merge_bounds(scope, then)
        if self.chance(0.6):
            self.emit("else:")
            self.depth += 1
            other = scope.copy()
            self.block(other, self.rng.randint(1, 2))
            self.depth -= 1
            self.merge_bounds(scope, other)

    def loop_header(self, scope):
        index = "i" if not self.loops else self.pick(["j", "k"])
        if any(l.index == index for l in self.loops):
            index = "k" if index == "j" else "j"
        n, m = self.sizes
        options = [(f"range({min(n, m) - 1})", min(n, m) - 2, min(n, m) - 1),
                   (f"range({self.rng.randint(0, 3)})", None, None),
                   ("range(len(x))", n - 1, n) if "x" in scope.vars else None,
                   ("range(x.shape[0] - 1)", n - 2, n - 1) if "x" in scope.vars else None,
                   ("range(A.shape[1])", m - 1, m) if "A" in scope.vars else None]
        if "n" in scope.vars:
            value = int(scope.vars["n"].bound)
            options += [("range(n)", value - 1, value)] * 3
            options += [("range(1, n)", value - 1, max(value - 1, 0)),
                        ("reversed(range(n))", value - 1, value),
                        ("range(n - 1, -1, -1)", value - 1, value)]
        if self.loops:
            outer = self.loops[-1]
            options += [(f"range({outer.index})", outer.max_index - 1, outer.max_index)] * 2
        options = [o for o in options if o is not None]
        header, max_index, trips = self.pick(options)
        if max_index is None:
            trips = int(header[6:-1])
            max_index = trips - 1
        self.features.add("for_loop" if not self.loops else "nested_loop")
        if "n" in header:
            self.features.add("runtime_trip_count")
        if trips == 0:
            self.features.add("zero_trip_loop")
        return index, header, max(max_index, 0), trips

    def stmt_for(self, scope):
        index, header, max_index, trips = self.loop_header(scope)
        self.emit(f"for {index} in {header}:")
        self.loops.append(Loop(index, max_index, trips))
        self.depth += 1
        inner = scope.copy()
        inner.vars[index] = Var((), max_index, is_int=True)
        if self.chance(0.25) and len(scope.floats()) >= 2:
            self.carried_tuple(inner)
        self.block(inner, self.rng.randint(1, 3))
        self.depth -= 1
        self.loops.pop()
        self.merge_bounds(scope, inner)

    def carried_tuple(self, scope):
        names = [k for k in scope.floats() if scope.vars[k].shape == ()]
        if len(names) < 2:
            return
        p, q = self.rng.sample(names, 2)
        rhs, rb = self.expr(scope, (), 1)
        self.emit(f"{p}, {q} = {q}, np.sin({p} + {rhs})")
        scope.vars[p].bound = max(scope.vars[q].bound, 1.0)
        scope.vars[q].bound = 1.0
        scope.vars[p].bound = scope.vars[q].bound = max(scope.vars[p].bound, scope.vars[q].bound)
        self.features.add("loop_carried_tuple")

    def stmt_while(self, scope):
        counter = self.fresh_name("count")
        limit = self.rng.randint(0, 4)
        self.emit(f"{counter} = 0")
        cond = f"{counter} < {limit}"
        if self.chance(0.6):
            cond += f" and {self.condition(scope)}"
        self.emit(f"while {cond}:")
        self.loops.append(Loop(counter, limit, limit))
        self.depth += 1
        self.emit(f"{counter} += 1")
        inner = scope.copy()
        self.block(inner, self.rng.randint(1, 2))
        self.depth -= 1
        self.loops.pop()
        self.merge_bounds(scope, inner)
        self.features.add("while_loop")

    def stmt_jump(self, scope):
        word = self.pick(["break", "continue"])
        loop = self.loops[-1]
        cond = self.condition(scope) if self.chance(0.7) else f"{loop.index} == {self.rng.randint(0, 2)}"
        self.emit(f"if {cond}:")
        self.emit(f"    {word}")
        self.features.add(word)

    def stmt_early_return(self, scope):
        text, b = self.expr(scope, (), self.rng.randint(1, 2))
        if b > LIMIT:
            text = f"np.tanh({text})"
        self.emit(f"if {self.condition(scope)}:")
        self.emit(f"    return {text}")
        self.features.add("early_return")

    # ------------------------------------------------------------------ results
    def scalar_result(self, scope):
        names = scope.floats()
        local = [k for k in names if k not in self.arg_names]
        chosen = self.rng.sample(local, min(len(local), self.rng.randint(1, 3)))
        rest = [k for k in names if k not in chosen]
        chosen += self.rng.sample(rest, min(len(rest), self.rng.randint(0, 2)))
        if not chosen:  # no local value and no argument drawn: one name at least (seeds with one keep theirs)
            if not names:
                return "0.0"
            chosen = [self.rng.choice(names)]
        terms = []
        for name in chosen:
            var = scope.vars[name]
            if var.shape == ():
                terms.append(name if var.bound <= LIMIT else f"np.tanh({name})")
                continue
            squash = var.bound > LIMIT
            inner = f"np.tanh({name})" if squash else name
            forms = [f"np.sum({inner})", f"np.mean({inner})", f"np.sum(np.sin({inner}))"]
            if len(var.shape) == 1 and not squash:
                forms.append(f"{inner} @ {inner}")
            terms.append(self.pick(forms))
        coefficients = [self.pick(["", "0.5 * ", "2.0 * ", "-"]) for _ in terms]
        text = " + ".join(c + t for c, t in zip(coefficients, terms))
        return text.replace("+ -", "- ")

    def array_result(self, scope):
        arrays = [k for k in scope.floats() if scope.vars[k].shape]
        if not arrays:
            return None
        name = self.pick(arrays)
        return name if scope.vars[name].bound <= LIMIT else f"np.tanh({name})"

    def generate(self):
        args, names, scope = self.make_arguments()
        self.arg_names = names
        for _ in range(self.rng.choice([0, 0, 1, 1, 2])):
            self.make_helper()
        self.depth = 1
        for _ in range(self.max_statements):
            self.statement(scope)
        returns = self.returns
        array = self.array_result(scope) if returns != "scalar" else None
        if array is None:
            returns = "scalar"
        if returns == "scalar":
            self.emit(f"return {self.scalar_result(scope)}")
        elif returns == "array":
            self.emit(f"return {array}")
        else:
            self.emit(f"return {self.scalar_result(scope)}, {array}")
        parts = ["import numpy as np", "import adcompile"]
        parts += [CUSTOM_FUNCTIONS[c][0] for c in sorted(self.custom_used)]
        parts += [h[1] for h in self.helpers]
        parts.append(f"def f({', '.join(names)}):\n" + "\n".join(self.lines))
        source = ast.unparse(ast.parse("\n\n".join(parts))) + "\n"
        if self.dtype == "float32":
            self.features.add("float32")
        return Program(source, args, names, self.seed, returns, self.features, self.dtype)


def generate(seed, **options):
    """A random program (source text and arguments) determined by ``seed``."""
    return ProgramGenerator(seed, **options).generate()
