"""Loop constructs of users' programs for the random-program generator.

``loop_construct(gen, scope)`` emits one of these (statements into ``gen``; the values it
leaves behind enter ``scope``), drawing from ``gen.rng`` (the generator swaps in a stream of
its own for them, so that programs keep the structure they had before these forms existed):

- slices whose bounds move with the loop variable: ``np.sum(x[i:])``, ``A[:, :j + 1]``,
  ``w[i:] = ...``, the shifted product ``v[i:] * v[:k - i]``;
- matrices carried around a loop that change layout (``h = M.T`` then ``h = np.tanh(h) @ W``,
  ``h = np.sin(h.T * 0.5)``);
- views rebound in a loop: ``t = t[1:]``, ``T = T[1:, :]`` (their shape changes every trip:
  only shape-agnostic reductions read them, and they never enter the scope);
- arrays made before a loop and read inside it: grids ``np.arange(k) * dt``, ``x * 2.0``,
  ``np.linspace``, ``np.meshgrid``;
- reductions along an axis inside loops broadcast back (``a - np.max(a, axis=1, keepdims=True)``,
  a softmax), and inserted-axis broadcasts ``u[:, None] * v[None, :]``;
- whole-array updates of elementwise chains inside loops (``w[:] = w - lr * g``);
- loops over the rows of a matrix (``for row in A[:k]:``, zero trips included);
- scratch arrays made in every iteration (``z = np.zeros_like(v)``), written by element and in
  place, sometimes kept for the next iteration (``prev = z``);
- branches whose sides give values of different dtypes in float32 programs, and
  if-expressions;
- a running minimum or maximum over the rows of a matrix, each row's score a scalar loop (the
  backward's inner loop gets a nonzero cotangent for the selected row only, and is skipped for
  the others), sometimes with a second sum of the inner loop that every row's cotangent reaches.

(Non-contiguous arguments are made by ``numerics.noncontiguous``.)

Every value keeps a static bound, as in ``generator.py``.
"""
import numpy as np

from . import generator as _generator  # the generator imports this module: names are read at call time


def Var(*args, **kwargs):
    return _generator.Var(*args, **kwargs)


def Loop(*args, **kwargs):
    return _generator.Loop(*args, **kwargs)


def fmt(value):
    return _generator.fmt(value)


def _vectors(scope, length=None):
    return [k for k, v in scope.vars.items() if not v.is_int and len(v.shape) == 1
            and (length is None or v.shape[0] == length)]


def _matrices(scope):
    return [k for k, v in scope.vars.items() if not v.is_int and len(v.shape) == 2]


class LoopForms:
    def __init__(self, gen, scope):
        self.gen, self.scope, self.rng = gen, scope, gen.rng

    def pick(self, items):
        return self.rng.choice(items)

    def small(self, shape, depth=1):
        """A bounded expression of ``shape`` (squashed by tanh when large)."""
        text, b = self.gen.expr(self.scope, shape, depth)
        if b > 3.0:
            return f"np.tanh({text})", 1.0
        return text, b

    def accumulator(self):
        name = self.gen.fresh_name("s")
        self.gen.emit(f"{name} = 0.0")
        return name

    def open_loop(self, trips):
        """``for`` over ``trips`` iterations (a literal or the int argument); (index, trips)."""
        index = "i" if not self.gen.loops else self.pick(["j", "k"])
        if any(loop.index == index for loop in self.gen.loops):
            index = "k" if index == "j" else "j"
        header = f"range({trips})"
        n_arg = self.scope.vars.get("n")
        if n_arg is not None and n_arg.is_int and int(n_arg.bound) <= trips and self.rng.random() < 0.4:
            trips, header = int(n_arg.bound), "range(n)"
            self.gen.features.add("runtime_trip_count")
        if trips == 0:
            self.gen.features.add("zero_trip_loop")
        self.gen.emit(f"for {index} in {header}:")
        self.gen.depth += 1
        self.gen.loops.append(Loop(index, max(trips - 1, 0), trips))
        self.scope.vars[index] = Var((), max(trips - 1, 0), is_int=True)
        return index, trips

    def close_loop(self, index):
        self.gen.depth -= 1
        self.gen.loops.pop()
        self.scope.vars.pop(index, None)

    def finish(self, name, bound):
        self.scope.vars[name] = Var((), bound)

    # ------------------------------------------------------------------ the constructs
    def moving_slices(self):
        vectors = _vectors(self.scope)
        matrices = _matrices(self.scope)
        if not vectors and not matrices:
            return False
        acc = self.accumulator()
        if vectors and (not matrices or self.rng.random() < 0.6):
            v = self.pick(vectors)
            (k,) = self.scope.vars[v].shape
            b = self.scope.vars[v].bound
            i, trips = self.open_loop(self.rng.randint(0, k))
            scalar, sb = self.small(())
            forms = [(f"np.sum(np.sin({v}[{i}:]))", k), (f"np.sum(np.cos({v}[{i}:]) ** 2)", k),
                     (f"np.sum(np.sin({v}[{i}:]) * {scalar})", k * sb)]
            if b <= 3.0:
                forms += [(f"np.sum({v}[:{i} + 1] * {v}[:{i} + 1])", k * b * b),
                          (f"np.sum(np.tanh({v}[{i}:]) * {v}[:{k} - {i}])", k * b)]
            form, fb = self.pick(forms)
            self.gen.emit(f"{acc} = 0.5 * {acc} + {form}")
            writable = [w for w in _vectors(self.scope, k) if self.scope.vars[w].writable]
            if writable and self.rng.random() < 0.5:
                w = self.pick(writable)
                self.gen.emit(f"{w}[{i}:] = 0.5 * {w}[{i}:] + np.sin({v}[{i}:])")
                self.scope.vars[w].bound = max(self.scope.vars[w].bound, 1.0) + 1.0
                self.gen.features.add("write_moving_slice")
            self.close_loop(i)
            self.finish(acc, 2.0 * fb)
        else:
            M = self.pick(matrices)
            r, c = self.scope.vars[M].shape
            j, trips = self.open_loop(self.rng.randint(0, c))
            form = self.pick([f"np.sum({M}[:, :{j} + 1], axis=1)", f"np.sum(np.sin({M}[:, {j}:]), axis=1)"])
            v = self.gen.fresh_name("v")
            self.gen.emit(f"{v} = np.tanh({form})")
            self.gen.emit(f"{acc} = {acc} + np.sum({v} * {v})")
            self.close_loop(j)
            self.finish(acc, float(r * max(trips, 1)))
        self.gen.features.add("moving_slice")
        return True

    def rebound_view(self):
        vectors = _vectors(self.scope)
        matrices = _matrices(self.scope)
        if not vectors and not matrices:
            return False
        acc = self.accumulator()
        t = self.gen.fresh_name("t")
        if vectors and (not matrices or self.rng.random() < 0.6):
            v = self.pick(vectors)
            (k,) = self.scope.vars[v].shape
            b = self.scope.vars[v].bound
            self.gen.emit(f"{t} = {v}")
            i, trips = self.open_loop(self.rng.randint(0, k - 1))
            scalar, sb = self.small(())
            reads = [(f"np.sum(np.sin({t}))", k), (f"np.tanh({t}[0]) * np.cos({t}[-1])", 1.0),
                     (f"np.sum(np.sin({t}) * {scalar})", k * sb)]
            if b <= 2.0:
                reads += [(f"{t}[0] * {t}[-1]", b * b), (f"np.sum({t} * {t})", k * b * b)]
            read, rb = self.pick(reads)
            self.gen.emit(f"{acc} = {acc} + {read}")
            self.gen.emit(f"{t} = {t}[1:]")
        else:
            M = self.pick(matrices)
            r, c = self.scope.vars[M].shape
            b = self.scope.vars[M].bound
            self.gen.emit(f"{t} = {M}")
            i, trips = self.open_loop(self.rng.randint(0, r - 1))
            reads = [(f"np.sum(np.tanh({t}[0]))", c), (f"np.sum(np.cos({t}), axis=0)[0]", r)]
            if b <= 2.0:
                reads.append((f"np.sum({t} * {t})", r * c * b * b))
            read, rb = self.pick(reads)
            self.gen.emit(f"{acc} = {acc} + {read}")
            self.gen.emit(f"{t} = {t}[1:, :]")
        self.close_loop(i)
        self.finish(acc, rb * max(trips, 1))
        self.gen.features.add("rebound_view")
        return True

    def carried_layout(self):
        """A matrix carried around a loop that changes its memory layout: it starts as a
        transpose ('F' for numba) or is transposed in the loop, or becomes a product."""
        matrices = _matrices(self.scope)
        if not matrices:
            return False
        M = self.pick(matrices)
        r, c = self.scope.vars[M].shape
        k = min(r, c)
        acc = self.accumulator()
        h = self.gen.fresh_name("h")
        start, updates = self.pick([
            (f"{M}.T", [f"np.tanh({h}) @ np.full(({r}, {r}), {fmt(self.rng.uniform(0.1, 0.4))})",
                        f"np.tanh({h} * 0.9)", f"np.tanh({h} + np.ones(({c}, {r})))"]),
            (f"np.tanh({M}[:{k}, :{k}])", [f"np.sin({h}.T * 0.5)", f"np.tanh({h}.T + {h})"]),
            (f"np.transpose(np.tanh({M}[:{k}, :{k}]))", [f"np.cos({h}) * {h}", f"np.tanh({h}.T @ {h})"]),
        ])
        self.gen.emit(f"{h} = {start}")
        i, trips = self.open_loop(self.rng.randint(0, 3))
        self.gen.emit(f"{acc} = {acc} + np.sum(np.tanh({h}) * {h})")
        self.gen.emit(f"{h} = {self.pick(updates)}")
        self.close_loop(i)
        self.finish(acc, float(r * c * max(self.scope.vars[M].bound, 1.0) * max(trips, 1)))
        self.gen.features.add("carried_layout")
        return True

    def grid_loop(self):
        """Arrays made before a loop (grids, scaled arguments) read inside it."""
        n, m = self.gen.sizes
        made = []
        forms = [(f"np.arange({n}) * {fmt(self.rng.uniform(0.05, 0.3))}", (n,), 0.3 * n),
                 (f"np.linspace(0.0, 1.0, {m})", (m,), 1.0)]
        for name in _vectors(self.scope):
            var = self.scope.vars[name]
            if var.bound <= 5.0:
                forms.append((f"{name} * 2.0", var.shape, 2.0 * var.bound))
        form, shape, bound = self.pick(forms)
        grid = self.gen.fresh_name("g")
        self.gen.emit(f"{grid} = {form}")
        self.scope.vars[grid] = Var(shape, bound, writable=True)
        made.append((grid, shape))
        if self.rng.random() < 0.5:
            u = self.pick(_vectors(self.scope, n) or [f"np.linspace(-1.0, 1.0, {n})"])
            G1, G2 = self.gen.fresh_name("G"), self.gen.fresh_name("G")
            self.gen.emit(f"{G1}, {G2} = np.meshgrid(np.linspace(-1.0, 1.0, {m}), {u})")
            ub = self.scope.vars[u].bound if u in self.scope.vars else 1.0
            self.scope.vars[G1] = Var((n, m), 1.0, writable=True)
            self.scope.vars[G2] = Var((n, m), ub, writable=True)
            made.append((G2, (n, m)))
            self.gen.features.add("meshgrid")
        acc = self.accumulator()
        grid, shape = self.pick(made)
        i, trips = self.open_loop(self.rng.randint(1, min(shape[0], 4)))
        partner, pb = self.small(shape, 1)
        read = self.pick([f"np.sum(np.sin({grid} * 0.5 + {partner}))", f"np.sum(np.tanh({grid}[{i}] * {partner}[{i}]))",
                          f"np.sum(np.exp(-{grid} * {grid}) * {partner})"])
        self.gen.emit(f"{acc} = {acc} + {read}")
        if self.rng.random() < 0.5:
            inner = self.scope.copy()
            self.gen.statement(inner, allow_blocks=False)
            self.gen.merge_bounds(self.scope, inner)
        self.close_loop(i)
        self.finish(acc, float(np.prod(shape)) * max(pb, 1.0) * trips)
        self.gen.features.add("grid_before_loop")
        return True

    def axis_broadcast_loop(self):
        """Axis reductions broadcast back, and inserted-axis broadcasts, inside a loop."""
        n, m = self.gen.sizes
        acc = self.accumulator()
        M = self.gen.fresh_name("M")
        i, trips = self.open_loop(self.rng.randint(1, 3))
        u, ub = self.small((n,), 1)
        v, vb = self.small((m,), 1)
        made = self.pick([(f"({u})[:, None] * ({v})[None, :]", ub * vb, "inserted_axis"),
                          (f"np.exp(-(({u})[:, None] - ({v})[None, :]) ** 2)", 1.0, "inserted_axis"),
                          (f"np.tanh(({u})[:, None] + ({v})[None, :])", 1.0, "inserted_axis")])
        self.gen.emit(f"{M} = {made[0]}")
        axis = self.rng.randint(0, 1)
        form = self.pick([(f"{M} - np.max({M}, axis={axis}, keepdims=True)", 2.0 * made[1]),
                          (f"{M} - np.mean({M}, axis={axis}, keepdims=True)", 2.0 * made[1]),
                          (f"np.exp({M} - np.max({M}, axis={axis}, keepdims=True))", 1.0)])
        S = self.gen.fresh_name("M")
        self.gen.emit(f"{S} = {form[0]}")
        if self.rng.random() < 0.5 and form[1] <= 2.0:
            self.gen.emit(f"{S} = np.exp({S}) / np.sum(np.exp({S}), axis={1 - axis}, keepdims=True)")
            self.gen.features.add("softmax")
        self.gen.emit(f"{acc} = {acc} + np.sum({S} * {S})")
        self.close_loop(i)
        self.finish(acc, n * m * max(form[1], 1.0) ** 2 * trips)
        self.gen.features.update({made[2], "keepdims_broadcast"})
        return True

    def whole_array_update(self):
        """``w[:] = w - lr * g`` with ``g`` an elementwise chain of ``w``, in a loop."""
        arrays = [k for k, v in self.scope.vars.items() if not v.is_int and v.shape and v.bound <= 5.0]
        if not arrays:
            return False
        src = self.pick(arrays)
        shape = self.scope.vars[src].shape
        w = self.gen.fresh_name("w" if len(shape) == 1 else "W")
        self.gen.emit(f"{w} = {src}.copy()")
        i, trips = self.open_loop(self.rng.randint(1, 3))
        partner, pb = self.small(shape, 1)
        g = self.gen.fresh_name("d")
        self.gen.emit(f"{g} = {self.pick([f'np.tanh({w}) * {partner}', f'np.sin({w} + {partner})', f'{w} * 0.5 - {partner} * 0.25'])}")
        lr = fmt(self.rng.uniform(0.05, 0.3))
        target = f"{w}[:]" if len(shape) == 1 else self.pick([f"{w}[:, :]", f"{w}[:]"])
        self.gen.emit(f"{target} = {w} - {lr} * {g}")
        self.close_loop(i)
        self.scope.vars[w] = Var(shape, 5.0 + trips * (pb + 5.0), writable=True)
        self.gen.features.add("whole_array_update")
        return True

    def row_loop(self):
        """``for row in M[:k]:`` (k may be 0, or the int argument): a loop over rows."""
        matrices = _matrices(self.scope)
        if not matrices:
            return False
        M = self.pick(matrices)
        r, c = self.scope.vars[M].shape
        acc = self.accumulator()
        rows = self.rng.randint(0, r)
        source = self.pick([M, f"{M}[:{rows}]"])
        n_arg = self.scope.vars.get("n")
        if source != M and n_arg is not None and n_arg.is_int and int(n_arg.bound) <= r and self.rng.random() < 0.5:
            source = f"{M}[:n]"
        row = self.gen.fresh_name("row")
        partner, pb = self.small((c,), 1)
        self.gen.emit(f"for {row} in {source}:")
        self.gen.emit(f"    {acc} = {acc} + np.sum(np.tanh({row}) * {partner})")
        self.finish(acc, r * c * max(pb, 1.0))
        self.gen.features.add("loop_over_rows")
        if source.endswith("[:0]") or (source.endswith("[:n]") and int(n_arg.bound) == 0):
            self.gen.features.add("zero_trip_loop")
        return True

    def scratch_array_loop(self):
        """``z = np.zeros_like(v)`` in every iteration, written at one element and in place, read;
        sometimes kept for the next iteration (``prev = z``), whose array must stay its own."""
        vectors = [v for v in _vectors(self.scope) if self.scope.vars[v].bound <= 5.0]
        if not vectors:
            return False
        v = self.pick(vectors)
        (k,) = self.scope.vars[v].shape
        b = self.scope.vars[v].bound
        acc = self.accumulator()
        z, prev = self.gen.fresh_name("z"), self.gen.fresh_name("prev")
        carried = self.rng.random() < 0.4
        if carried:
            self.gen.emit(f"{prev} = {v} * 0.5")
        i, trips = self.open_loop(self.rng.randint(0, 3))
        partner, pb = self.small((k,), 1)
        self.gen.emit(f"{z} = np.zeros_like({v})")
        self.gen.emit(f"{z}[{i} % {k}] = {v}[{i} % {k}] * {fmt(self.rng.uniform(0.5, 1.5))}")
        self.gen.emit(f"{z} += np.tanh({partner}) * 0.5")
        read = f"np.sum(np.sin({z}) * {v})" + (f" + np.sum({prev} * {z})" if carried else "")
        self.gen.emit(f"{acc} = {acc} + {read}")
        if carried:
            self.gen.emit(f"{prev} = {z}")
        self.close_loop(i)
        self.finish(acc, trips * k * (b + (max(b, 2.0) * (1.5 * b + 0.5) if carried else 0.0)))
        self.gen.features.add("scratch_array_in_loop")
        return True

    def selected_row(self):
        """``best`` = the smallest (or largest) of the rows' scores, each a scalar loop over the
        row; sometimes the inner loop also adds to a sum every row contributes to."""
        matrices = [M for M in _matrices(self.scope) if self.scope.vars[M].bound <= 5.0]
        if not matrices:
            return False
        M = self.pick(matrices)
        r, c = self.scope.vars[M].shape
        partners = [v for v in _vectors(self.scope, c) if self.scope.vars[v].bound <= 5.0]
        bound = self.scope.vars[M].bound + (self.scope.vars[partners[0]].bound if partners else 1.0)
        score_bound = c * bound * bound
        smallest = self.rng.random() < 0.7
        best, score, total = (self.gen.fresh_name(base) for base in ("best", "score", "spread"))
        also_total = self.rng.random() < 0.4
        self.gen.emit(f"{best} = {fmt(score_bound + 1.0) if smallest else fmt(-1.0)}")
        if also_total:
            self.gen.emit(f"{total} = 0.0")
        j, _ = self.open_loop(r)
        self.gen.emit(f"{score} = 0.0")
        k, _ = self.open_loop(c)
        partner = f"{self.pick(partners)}[{k}]" if partners else fmt(self.rng.uniform(-1.0, 1.0))
        difference = self.gen.fresh_name("difference")
        self.gen.emit(f"{difference} = {M}[{j}, {k}] - {partner}")
        self.gen.emit(f"{score} += {difference} * {difference}")
        if also_total:
            self.gen.emit(f"{total} = {total} + np.sin({difference}) * 0.1")
        self.close_loop(k)
        self.gen.emit(f"if {score} {'<' if smallest else '>'} {best}:")
        self.gen.emit(f"    {best} = {score}")
        self.close_loop(j)
        self.finish(best, score_bound + 1.0)
        if also_total:
            self.finish(total, 0.1 * r * c)
        self.gen.features.add("selected_row")
        return True

    def small_vectors(self):
        """Per row, a vector of a few scalars built with ``np.array([...])`` (the per-observation
        2- and 3-vectors of bundle adjustment): combined elementwise with a slice of the row or a
        vector built before the loop, rotated by reading its elements back, reduced; sometimes
        kept for the next row (``previous = q``)."""
        matrices = [M for M in _matrices(self.scope) if self.scope.vars[M].bound <= 5.0]
        if not matrices:
            return False
        M = self.pick(matrices)
        r, c = self.scope.vars[M].shape
        b = max(self.scope.vars[M].bound, 1.0)
        k = self.rng.randint(2, 3)
        before = [self.small((), 1) for _ in range(k)]
        fixed, p, q, acc, previous = (self.gen.fresh_name(base) for base in ("w", "p", "q", "acc", "previous"))
        wb = max([1.0] + [bound for _, bound in before])
        self.gen.emit(f"{fixed} = np.array([{', '.join(text for text, _ in before)}])")
        self.gen.emit(f"{acc} = 0.0")
        carried = self.rng.random() < 0.3
        if carried:
            self.gen.emit(f"{previous} = {fixed} * 0.5")
        j, trips = self.open_loop(r)
        items = [self.pick([f"{M}[{j}, {self.rng.randrange(c)}] * {fmt(self.rng.uniform(-1.0, 1.0))}",
                            f"np.sin({M}[{j}, {self.rng.randrange(c)}])", fmt(self.rng.uniform(-1.0, 1.0)),
                            f"{M}[{j}, {self.rng.randrange(c)}] * {M}[{j}, {self.rng.randrange(c)}]"])
                 for _ in range(k)]
        self.gen.emit(f"{p} = np.array([{', '.join(items)}])")
        if c >= k and self.rng.random() < 0.5:
            start = self.rng.randint(0, c - k)
            other, ob = f"{M}[{j}, {start}:{start + k}]", b
        else:
            other, ob = fixed, wb
        rotated = ", ".join(f"{'-' if self.rng.random() < 0.5 else ''}{p}[{(m + 1) % k}]" for m in range(k))
        self.gen.emit(f"{q} = {p} * {other} + np.array([{rotated}]) * {fmt(self.rng.uniform(0.2, 0.8))}")
        qb = b * b * ob + b
        reads = [f"np.sum({q} * {q})", f"{q}[0] * {q}[{k - 1}] - {q} @ {fixed}",
                 f"np.sum(np.tanh({q}) * {fixed})"]
        self.gen.emit(f"{acc} += {self.pick(reads)}" + (f" + np.sum({previous} * {q})" if carried else ""))
        if carried:
            self.gen.emit(f"{previous} = {q}")
        self.close_loop(j)
        self.finish(acc, trips * k * (qb * qb + qb * wb + (qb * max(qb, wb) if carried else 0.0)))
        self.gen.features.add("small_vectors")
        return True

    def mixed_branch(self):
        """An if-expression, or a branch whose sides differ in dtype (float32 programs)."""
        vectors = [v for v in _vectors(self.scope) if self.scope.vars[v].bound <= 5.0]
        cond = self.gen.condition(self.scope)
        if vectors and self.rng.random() < 0.5:
            v = self.pick(vectors)
            (k,) = self.scope.vars[v].shape
            name = self.gen.fresh_name("v")
            b = self.scope.vars[v].bound
            other = self.pick([f"np.zeros({k})", f"np.ones({k}) * 0.5", f"np.linspace(-0.5, 0.5, {k})"])
            if self.rng.random() < 0.5:
                self.gen.emit(f"{name} = {v} * 2.0 if {cond} else {other}")
                self.gen.features.add("if_expression")
            else:
                self.gen.emit(f"if {cond}:")
                self.gen.emit(f"    {name} = {v} * 2.0")
                self.gen.emit("else:")
                self.gen.emit(f"    {name} = {other}")
            self.scope.vars[name] = Var((k,), max(2.0 * b, 1.0), writable=False)
            self.gen.features.add("mixed_dtype_branch" if self.gen.dtype == "float32" else "branch")
            return True
        name = self.gen.fresh_name("s")
        text, b = self.small((), 1)
        self.gen.emit(f"{name} = {text} if {cond} else {fmt(self.rng.uniform(-1.0, 1.0))}")
        self.scope.vars[name] = Var((), max(b, 1.0))
        self.gen.features.add("if_expression")
        return True


CONSTRUCTS = ("moving_slices", "rebound_view", "grid_loop", "axis_broadcast_loop", "whole_array_update",
              "row_loop", "mixed_branch", "carried_layout", "scratch_array_loop", "selected_row", "small_vectors")


def loop_construct(gen, scope):
    """Emit one construct of this module; False when none fits the scope."""
    forms = LoopForms(gen, scope)
    return getattr(forms, gen.rng.choice(CONSTRUCTS))()

