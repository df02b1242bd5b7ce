"""Expressions of the numpy functions of issue 14 for the random-program generator.

``coverage_form(gen, scope, shape, depth)`` returns ``(text, bound)`` of one such expression
of ``shape``, or None when none fits: linear algebra on well-conditioned matrices (solve, inv,
det, slogdet, cholesky, eigvalsh, matrix norms, einsum, a stacked solve), scans along an axis,
sort, roll, pad, convolve, take, tile/repeat, flip, triu/tril, median/percentile/quantile and
special functions. Matrices handed to the decompositions are built to be well conditioned:
``I + 0.2 tanh(E)`` of size k <= 4 has its singular values in [0.2, 1.8].
"""


def _fmt(value):
    return repr(round(float(value), 2))


class CoverageForms:
    def __init__(self, gen, scope, depth):
        self.gen, self.scope, self.depth = gen, scope, depth - 1
        self.rng = gen.rng

    def sub(self, shape):
        return self.gen.expr(self.scope, shape, self.depth)

    def squashed(self, shape):
        text, _ = self.sub(shape)
        return f"np.tanh({text})"

    def well(self, k):
        """A well-conditioned k x k matrix."""
        return f"(np.eye({k}) + 0.2 * {self.squashed((k, k))})"

    def symmetric(self, k):
        m = self.squashed((k, k))
        return f"({m} + {m}.T)"

    def positive_definite(self, k):
        w = self.well(k)
        return f"({w} @ {w}.T)"

    def size(self):
        return self.rng.randint(2, 4)

    # ------------------------------------------------------------------ by result shape
    def scalar(self):
        k = self.size()
        v, vb = self.sub((k,))
        forms = [
            lambda: (f"np.linalg.det({self.well(k)})", 1.8 ** k, "linalg"),
            lambda: (f"np.linalg.slogdet({self.well(k)})[1]", k * 0.6, "linalg"),
            lambda: (f"np.sum(np.linalg.solve({self.well(k)}, {v}))", 5.0 * vb * k, "linalg"),
            lambda: (f"np.linalg.eigvalsh({self.symmetric(k)})[-1]", 2.0 * k, "linalg"),
            lambda: (f"np.linalg.norm({self.squashed((k, self.size()))}, {self.rng.choice(['2', repr('nuc'), repr('fro')])})",
                     4.0 * k, "linalg"),
            lambda: (f"np.einsum('ij,ij->', {self.squashed((k, k))}, {self.well(k)})", 2.0 * k * k, "einsum"),
            lambda: (f"np.sum(np.linalg.solve(np.stack(({self.well(k)}, {self.well(k)})), np.stack(({v}, {v}))[:, :, None]))",
                     10.0 * vb * k, "stacked_linalg"),
            lambda: (f"np.median({v})", vb, "order_statistics"),
            lambda: (f"np.percentile({v}, {_fmt(self.rng.uniform(5, 95))})", vb, "order_statistics"),
            lambda: (f"np.quantile({v}, {_fmt(self.rng.uniform(0.05, 0.95))})", vb, "order_statistics"),
            lambda: (f"np.sum(np.sinc({v}))", float(k), "special"),
        ]
        return self.rng.choice(forms)()

    def vector(self, k):
        v, vb = self.sub((k,))
        c = self.size()
        forms = [
            lambda: (f"np.cumsum({v})", vb * k, "scan"),
            lambda: (f"np.cumprod(1.0 + 0.3 * np.tanh({v}))", 1.3 ** k, "scan"),
            lambda: (f"np.sort({v})", vb, "sort"),
            lambda: (f"np.roll({v}, {self.rng.randint(-2, 2)})", vb, "roll"),
            lambda: (f"np.flip({v})", vb, "flip"),
            lambda: (f"np.linalg.solve({self.well(k)}, {v})", 5.0 * vb * k, "linalg"),
            lambda: (f"np.linalg.eigvalsh({self.symmetric(k)})", 2.0 * k, "linalg"),
            lambda: (f"np.einsum('ij,j->i', {self.well(k)}, {v})", 1.8 * vb * k, "einsum"),
            lambda: self.gathered(k),
            lambda: self.lengthened(k),
            lambda: self.along_axis(k, c),
        ]
        return self.rng.choice(forms)()

    def along_axis(self, k, c):
        """A vector of length k from the lines of a matrix: median, percentile, cumsum."""
        rows, rb = self.sub((k, c))
        columns, cb = self.sub((c, k))
        return self.rng.choice([(f"np.median({rows}, axis=1)", rb, "order_statistics"),
                                (f"np.percentile({columns}, {_fmt(self.rng.uniform(5, 95))}, axis=0)", cb,
                                 "order_statistics"),
                                (f"np.cumsum({columns}, axis=0)[-1]", cb * c, "scan")])

    def gathered(self, k):
        j = self.size()
        u, ub = self.sub((j,))
        idx = [self.rng.randrange(j) for _ in range(k)]
        return f"np.take({u}, np.array({idx}))", ub, "take"

    def lengthened(self, k):
        """A vector of length k from a shorter one: pad, convolve, tile, repeat."""
        forms = []
        if k >= 3:
            u, ub = self.sub((k - 2,))
            forms.append((f"np.pad({u}, (1, 1))", ub, "pad"))
            forms.append((f"np.pad({u}, 1, mode='edge')", ub, "pad"))
            forms.append((f"np.convolve({u}, np.array([0.25, 0.5, 0.25]))", ub, "convolve"))
        if k % 2 == 0:
            u, ub = self.sub((k // 2,))
            forms.append((f"np.tile({u}, 2)", ub, "tile_repeat"))
            forms.append((f"np.repeat({u}, 2)", ub, "tile_repeat"))
        if not forms:
            return None
        return self.rng.choice(forms)

    def matrix(self, r, c):
        m, mb = self.sub((r, c))
        axis = self.rng.randint(0, 1)
        forms = [
            lambda: (f"np.{self.rng.choice(['triu', 'tril'])}({m}, {self.rng.randint(-1, 1)})", mb, "triangle"),
            lambda: (f"np.flip({m}, axis={axis})", mb, "flip"),
            lambda: (f"np.cumsum({m}, axis={axis})", mb * (r, c)[axis], "scan"),
            lambda: (f"np.sort({m}, axis={axis})", mb, "sort"),
            lambda: (f"np.roll({m}, 1, axis={axis})", mb, "roll"),
        ]
        if r == c:
            forms += [lambda: (f"np.linalg.inv({self.well(r)})", 5.0, "linalg"),
                      lambda: (f"np.linalg.cholesky({self.positive_definite(r)})", 2.0, "linalg")]
        return self.rng.choice(forms)()


def coverage_form(gen, scope, shape, depth):
    """(text, bound) of an issue-14 numpy expression of ``shape``, or None."""
    forms = CoverageForms(gen, scope, depth)
    if shape == ():
        made = forms.scalar()
    elif len(shape) == 1:
        made = forms.vector(shape[0])
    else:
        made = forms.matrix(*shape)
    if made is None:
        return None
    text, bound, feature = made
    gen.features.add(feature)
    return text, bound
