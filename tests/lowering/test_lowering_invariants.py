"""The invariants that make the lowering's optimisations legal, tested on the backend that runs
them (numba, lowering on) and on the Python backend.

- Buffer reuse (``lowering/buffer_reuse.py``): a donor's memory is taken only once its live
  range has ended over the whole loop nest. A value made before a loop and read in every
  iteration is live in every iteration; a name carried to the next iteration is live there.
- Fusion extents (``lowering/varying_lengths.py``): a fused loop's extent is the length of the
  values it reads as they are where it runs; a view rebound in a loop (``t = t[:-1]``) has a
  new length in each iteration.

Each program is compared with numpy (forward) and with central differences (``adcompile.grad``),
the Hessian with differences of the gradient. A small generator of random loop programs of the
risky shapes (arrays made before a loop and read in it, views rebound in loops, nested and
``while`` loops, 2-d) fuzzes both: a few programs on numba in the default run, more lowered as
for numba but run as Python, many more under ``-m slow``.
"""
import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences
from randprog.loading import load_module, unload_module

BACKENDS = ("numba", "python")


def compiled(f, backend):
    return adcompile.compile(f) if backend == "numba" else adcompile.compile(f, backend="python")


def unless_reverse_mode_fails(f, args, wrt=0):
    """Marks the test an expected failure when the gradient of ``f`` fails on the Python
    backend without any lowering: reverse mode's own error (a shape read from a value after
    its tape restored the previous one, in loops rebinding a view), not the lowering's."""
    try:
        adcompile.grad(adcompile.compile(f, backend="python", fuse=False), wrt=wrt)(*args)
    except adcompile.AdCompileError as error:
        pytest.xfail(f"reverse mode fails without the lowering: {str(error).splitlines()[0]}")


def check(f, args, backend, wrt=0, rtol=1e-9, grad_tol=1e-6):
    """``f`` compiled with ``backend``: its value against numpy's, its gradient with respect to
    argument ``wrt`` against central differences of numpy's ``f`` (in float64)."""
    g = compiled(f, backend)
    expected = f(*args)
    np.testing.assert_allclose(g(*args), expected, rtol=rtol, atol=rtol)
    unless_reverse_mode_fails(f, args, wrt)
    gradient = adcompile.grad(g, wrt=wrt)(*args)

    def along(v):
        full = [np.asarray(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in args]
        full[wrt] = v
        return f(*full)

    fd = gradient_by_differences(along, (np.asarray(args[wrt], dtype=np.float64),))
    np.testing.assert_allclose(np.asarray(gradient, dtype=np.float64), fd, rtol=grad_tol, atol=grad_tol)


# ------------------------------------------------------------------ arrays read across iterations
def image(p, n):
    xs = np.arange(n) + 0.5  # made before the loop, read in every iteration
    img = np.ones(n)
    for c in range(p.shape[0]):
        img = img * (xs - p[c])
    return np.sum(img)


def fourier(a, dt):
    t = np.arange(20) * dt
    yhat = np.zeros(20)
    for k in range(a.shape[0]):
        yhat = yhat + a[k] * np.cos((k + 1) * t)
    return np.sum(yhat ** 2)


def stable_softmax_sum(x):
    w = x.copy()
    s = 0.0
    for k in range(3):
        s = s + np.sum(np.exp(np.sin(w) - np.max(np.sin(w))))
    return s


def image_while(p, x):
    xs = x + 0.5
    img = np.ones_like(x)
    c = 0
    while c < p.shape[0]:
        img = img * (xs - p[c])
        c = c + 1
    return np.sum(img)


def nested_reads(p, x):
    base = np.sin(x) + 1.5  # read in every iteration of both loops
    acc = np.ones_like(x)
    for i in range(p.shape[0]):
        inner = base * p[i]  # made in the outer loop, read in every inner iteration
        for j in range(2):
            acc = acc * (base - inner * (j + 1)) * 0.5
    return np.sum(acc)


def carried_name(p, x):
    prev = np.zeros_like(x)
    s = 0.0
    for k in range(p.shape[0]):
        d = np.sin(x * p[k])
        s = s + np.sum(prev * d)  # the previous iteration's d, through prev
        prev = d
        e = np.exp(d) * 0.5 + d
        s = s + np.sum(e * x)
    return s


def grid_reads(p, X):
    base = np.cos(X) + 2.0  # 2-d, made before the loop
    acc = np.ones_like(X)
    for c in range(p.shape[0]):
        acc = acc * (base - p[c]) * 0.5
    return np.sum(acc * acc)


P3 = np.array([0.3, 0.7, 1.1])
X5 = np.linspace(0.1, 0.9, 5)
ACROSS_ITERATIONS = [
    (image, (P3, 4)),
    (fourier, (np.array([0.3, -0.2, 0.5]), 0.1)),
    (stable_softmax_sum, (np.linspace(0.0, 1.0, 5),)),
    (image_while, (P3, X5)),
    (nested_reads, (np.array([0.2, 0.4]), X5)),
    (carried_name, (np.array([0.5, 1.5, -0.7]), X5)),
    (grid_reads, (np.array([0.2, 0.6]), np.linspace(0.0, 1.0, 12).reshape(3, 4))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", ACROSS_ITERATIONS, ids=[f.__name__ for f, _ in ACROSS_ITERATIONS])
def test_value_read_in_later_iterations_keeps_its_memory(f, args, backend):
    check(f, args, backend)


def test_float32_value_read_in_later_iterations():
    p, x = P3.astype(np.float32), X5.astype(np.float32)
    g = adcompile.compile(image_while)
    value = g(p, x)
    np.testing.assert_allclose(value, image_while(p, x), rtol=1e-5)
    gradient = adcompile.grad(g)(p, x)
    assert gradient.dtype == np.float32
    fd = gradient_by_differences(lambda v: image_while(v, x.astype(np.float64)), (p.astype(np.float64),))
    np.testing.assert_allclose(gradient, fd, rtol=2e-3, atol=2e-3)


def garch_like(p, r):
    n = r.shape[0]
    omega = np.exp(p[0])  # its batched tangent is an array made before the recursion
    s2 = 1.0
    total = 0.0
    for t in range(1, n):
        s2 = omega + p[1] * r[t - 1] ** 2 + 0.5 * s2
        total = total + np.log(s2) + r[t] ** 2 / s2
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_with_a_tangent_made_before_a_recursion(backend):
    p, r = np.array([-0.5, 0.3]), np.linspace(0.1, 1.0, 6)
    hessian = adcompile.hessian(compiled(garch_like, backend))(p, r)
    gradient = adcompile.grad(adcompile.compile(garch_like, backend="python"))
    eps = 1e-5
    fd = np.array([(gradient(p + eps * e, r) - gradient(p - eps * e, r)) / (2 * eps) for e in np.eye(2)])
    np.testing.assert_allclose(hessian, fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-12)


# ------------------------------------------------------------------ views rebound in loops
def shrink_end(x):
    t = x
    s = 0.0
    for k in range(3):
        t = t[:-1]
        s = s + np.sum(np.sin(t) * t)
    return s


def shrink_start(x):
    t = x
    s = 0.0
    for k in range(3):
        t = t[1:]
        s = s + np.sum(np.sin(t) * t)
    return s


def shrink_while(x):
    t = x
    s = 0.0
    k = 0
    while k < 3:
        t = t[1:]
        s = s + np.sum(np.exp(0.5 * t) * t)
        k = k + 1
    return s


def shrink_rows(X):
    T = X
    s = 0.0
    for k in range(2):
        T = T[1:, :]
        s = s + np.sum(np.cos(T) * T)
    return s


def shrink_columns(X):
    T = X
    s = 0.0
    for k in range(2):
        T = T[:, :-1]
        s = s + np.sum(np.tanh(T) * T * 2.0)
    return s


def shrink_nested(x):
    t = x
    s = 0.0
    for i in range(2):
        for j in range(2):
            t = t[1:]
            s = s + np.sum(np.sin(t) * t)
        s = s + np.sum(t * t)
    return s


def stale_name(x):
    """``u`` keeps the length ``t`` had before ``t = t[:-1]``: with two elements and one,
    ``u * t`` broadcasts the one element of ``t``; a loop sized by ``t`` alone is wrong (the
    lengths are compared where the loop runs)."""
    t = x
    s = 0.0
    for k in range(1):
        t = t[1:]
        u = np.sin(t)
        t = t[:-1]
        s = s + np.sum(u * t)
    return s


def shrink_and_grow_values(x):
    t = x
    acc = x * 0.0
    for k in range(3):
        t = t[:-1]
        acc = acc[1:] + np.sin(t)
    return np.sum(acc * acc)


X6 = np.linspace(0.1, 0.9, 6)
X45 = np.linspace(0.1, 0.9, 20).reshape(4, 5)
REBOUND_VIEWS = [
    (shrink_end, (X6,)),
    (shrink_start, (X6,)),
    (shrink_while, (X6,)),
    (shrink_rows, (X45,)),
    (shrink_columns, (X45,)),
    (shrink_nested, (np.linspace(0.1, 0.9, 7),)),
    (stale_name, (np.array([0.3, 0.8, 0.5]),)),
    (shrink_and_grow_values, (X6,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", REBOUND_VIEWS, ids=[f.__name__ for f, _ in REBOUND_VIEWS])
def test_fused_loop_reads_extents_where_it_runs(f, args, backend):
    check(f, args, backend)


def test_float32_rebound_view():
    x = X6.astype(np.float32)
    g = adcompile.compile(shrink_start)
    np.testing.assert_allclose(g(x), shrink_start(x), rtol=1e-5)
    unless_reverse_mode_fails(shrink_start, (x,))
    gradient = adcompile.grad(g)(x)
    assert gradient.dtype == np.float32
    fd = gradient_by_differences(shrink_start, (X6,))
    np.testing.assert_allclose(gradient, fd, rtol=2e-3, atol=2e-3)


# ------------------------------------------------------------------ random loop programs
_UNARY = ("np.sin({})", "np.cos({})", "np.tanh({})", "(0.5 * {})", "np.exp(0.3 * {})")
_BINARY = ("({} + {})", "({} - {})", "({} * {})")


def _expression(rng, atoms, depth=2):
    if depth == 0 or rng.random() < 0.3:
        return atoms[rng.integers(len(atoms))]
    if rng.random() < 0.4:
        return _UNARY[rng.integers(len(_UNARY))].format(_expression(rng, atoms, depth - 1))
    return _BINARY[rng.integers(len(_BINARY))].format(_expression(rng, atoms, depth - 1),
                                                     _expression(rng, atoms, depth - 1))


def _loop(rng, index, count, body, indent):
    """``for`` or ``while`` over ``range(count)`` with ``body`` (lines) inside."""
    pad = " " * indent
    if rng.random() < 0.3:
        return [f"{pad}{index} = 0", f"{pad}while {index} < {count}:"] + \
            [pad + "    " + line for line in body] + [f"{pad}    {index} = {index} + 1"]
    return [f"{pad}for {index} in range({count}):"] + [pad + "    " + line for line in body]


def random_program(rng, name="prog"):
    """(source of ``name(x, p)``, x, p): one of the risky shapes, at random."""
    two_d = rng.random() < 0.3
    x = rng.uniform(0.2, 0.9, (4, 5) if two_d else (7,))
    p = rng.uniform(0.1, 0.5, (int(rng.integers(1, 4)),))
    lines = [f"def {name}(x, p):", "    s = 0.0"]
    if rng.random() < 0.5:  # an array made before the loop, read in every iteration
        lines += [f"    a = {_expression(rng, ['x'])} + 1.0", "    acc = np.ones_like(x)"]
        update = [f"acc = np.tanh({_expression(rng, ['acc', 'a', 'p[k]'])} + 0.1 * acc)"]
        if rng.random() < 0.5:
            update += [f"b = {_expression(rng, ['a', 'acc'])} + a", f"s = s + np.sum({_expression(rng, ['b', 'a'])})"]
        if rng.random() < 0.4:  # nested: read in every iteration of an inner loop too
            inner = [f"acc = 0.5 * {_expression(rng, ['acc', 'a'])} + 0.1 * acc"]
            update += _loop(rng, "j", 2, inner, 0)
        lines += _loop(rng, "k", "p.shape[0]", update, 4)
        lines += [f"    return s + np.sum({_expression(rng, ['acc', 'a'])})"]
    else:  # a view rebound in the loop
        cut = ["t[1:]", "t[:-1]"] if not two_d else ["t[1:, :]", "t[:, :-1]", "t[:-1, 1:]"]
        lines += ["    t = x"]
        body = [f"t = {cut[rng.integers(len(cut))]}", f"s = s + np.sum({_expression(rng, ['t', 'p[k]'])})"]
        if rng.random() < 0.3:
            body.insert(0, "u = t")
            body.append(f"s = s + np.sum({_expression(rng, ['u'])})")
        if rng.random() < 0.3:
            body = _loop(rng, "j", 1, body, 0)
        lines += _loop(rng, "k", "p.shape[0]", body, 4)
        lines += ["    return s"]
    return "import numpy as np\n\n\n" + "\n".join(lines) + "\n", x, p


def check_random_program(seed, backend):
    rng = np.random.default_rng(seed)
    source, x, p = random_program(rng)
    module = load_module(source, stem="lowering")
    try:
        f = module.prog
        expected = f(x, p)
        g = compiled(f, backend)
        np.testing.assert_allclose(g(x, p), expected, rtol=1e-9, atol=1e-9, err_msg=source)
        unless_reverse_mode_fails(f, (x, p))
        gradient = adcompile.grad(g)(x, p)
        fd = gradient_by_differences(lambda v: f(v, p), (x,))
        np.testing.assert_allclose(gradient, fd, rtol=1e-5, atol=1e-6, err_msg=source)
    finally:
        unload_module(module)


@pytest.mark.parametrize("seed", range(4))
def test_random_loop_programs_on_numba(seed):
    check_random_program(seed, "numba")


@pytest.mark.parametrize("seed", range(100, 140))
def test_random_loop_programs_lowered_as_for_numba(seed, monkeypatch):
    """The same lowering, run as plain Python (fast to load): many more programs."""
    monkeypatch.setenv("ADCOMPILE_FUSE", "all")
    check_random_program(seed, "python")


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(1000, 1060))
def test_many_random_loop_programs_on_numba(seed):
    check_random_program(seed, "numba")
