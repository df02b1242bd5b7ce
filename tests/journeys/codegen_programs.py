"""A fixed set of programs, compiled and called once, so that their generated modules land in
the cache folder (``ADCOMPILE_CACHE_DIR``). ``tests/codegen/test_deterministic_codegen.py`` runs this
script in fresh processes under different ``PYTHONHASHSEED``s and compares the folders byte for
byte: the generated source, and so the file name (its digest), must be a pure function of the
program and its argument types.

    python tests/journeys/codegen_programs.py numba          # every program, numba backend
    python tests/journeys/codegen_programs.py python         # the Python backend
    python tests/journeys/codegen_programs.py numba fused    # only the named programs

The set: the golden gradients (``tests/codegen/test_golden_source.py``), programs with fused loops
(slices, broadcasts, reductions), a Hessian, a custom Function whose backward reads global
arrays (and ``gradcheck`` of one), a Module's gradient, ``fit``, ``train_step`` and an
optimizer's ``step``. With ``NUMBA_DISABLE_JIT=1`` the numba backend writes the same files
without compiling them (numba then runs the generated code as Python), which keeps the
comparison fast.
"""
import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(TESTS / "codegen"), str(TESTS)]  # the golden programs, and the helpers they import

import adcompile  # noqa: E402
import adcompile.nn.functional as F  # noqa: E402
from adcompile import Function, nn  # noqa: E402
from test_golden_source import CASES as GOLDEN  # noqa: E402

BACKEND = sys.argv[1] if len(sys.argv) > 1 else "numba"
RNG = np.random.default_rng(3)


def fused(x, A, b):
    """Slices, a broadcast against a row and a column, reductions along each axis."""
    d = x[1:] - x[:-1] ** 2
    centered = A - np.mean(A, axis=0, keepdims=True)
    scores = np.exp(centered * b[None, :] - x[:A.shape[0], None])
    return np.sum(100.0 * d ** 2 + (1 - x[:-1]) ** 2) + np.sum(np.log(np.sum(scores, axis=1)))


def shifted_stencil(u, k):
    total = 0.0
    for _ in range(k):
        u = u - 0.1 * (u[2:] - 2 * u[1:-1] + u[:-2]).sum() * u
        total = total + np.sum(u[1:] * u[:-1])
    return total


def cubic_energy(x):
    return np.sum(x ** 3 * np.sin(x)) + np.sum(x[1:] * x[:-1])


SCALE_A = np.array([1.0, 2.0, 3.0, 4.0])
SCALE_B = np.array([0.5, 0.25, 0.125, 0.0625])
SCALE_C = np.array([-1.0, 1.0, -1.0, 1.0])


class Weighted(Function):
    """A backward reading three global arrays: each becomes a hidden parameter, in order."""

    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * SCALE_A + g * SCALE_B + g * SCALE_C


def custom(x):
    return np.sum(Weighted.apply(x) * x)


class Scaled(Function):
    """x * x * SCALE_A, for ``adcompile.gradcheck`` (which compiles a wrapper module calling it)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x * SCALE_A

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2.0 * x * SCALE_A * g


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(6, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, x):
        return self.out(F.relu(self.hidden(x)))


def loss_fn(model, images, labels):
    return F.cross_entropy(model(images), labels)


def squared_error(model, X, y):
    return np.mean((model(X)[:, 0] - y) ** 2)


def compiled(fn):
    return adcompile.compile(fn, backend=BACKEND)


def golden():
    for fn, args, wrt in GOLDEN.values():
        adcompile.grad(compiled(fn), wrt=wrt)(*args)


def fused_loops():
    x, A, b = RNG.standard_normal(9), RNG.standard_normal((5, 4)), RNG.standard_normal(4)
    adcompile.grad(compiled(fused), wrt=(0, 1, 2))(x, A, b)


def loop():
    adcompile.value_and_grad(compiled(shifted_stencil))(RNG.standard_normal(7), 3)


def hessian():
    adcompile.hessian(compiled(cubic_energy))(RNG.standard_normal(5))


def custom_function():
    adcompile.grad(compiled(custom))(RNG.standard_normal(4))
    adcompile.gradcheck(Scaled.apply, (RNG.standard_normal(4),))


def model_and_data():
    adcompile.modules.init.manual_seed(0)
    model = MLP().compile(BACKEND)
    X, y = RNG.standard_normal((20, 6)), RNG.integers(0, 3, 20)
    return model, X, y


def module_gradient():
    model, X, y = model_and_data()
    adcompile.grad(compiled(loss_fn))(model, X, y)
    linear = nn.Linear(6, 1).compile(BACKEND)
    adcompile.value_and_grad(compiled(squared_error))(linear, X, y * 1.0)


def fit():
    model, X, y = model_and_data()
    optimizer = adcompile.optim.Adam(model.parameters(), lr=1e-2)
    optimizer.backend = BACKEND
    adcompile.fit(loss_fn, model, optimizer, X, y, epochs=2, batch_size=8, seed=0, progress=False)


def train_step():
    model, X, y = model_and_data()
    optimizer = adcompile.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    optimizer.backend = BACKEND
    step = adcompile.train_step(loss_fn, model, optimizer)
    step(X, y)


def optimizer_step():
    model, X, y = model_and_data()
    optimizer = adcompile.optim.Adam(model.parameters(), lr=1e-2)
    optimizer.backend = BACKEND
    optimizer.zero_grad()
    adcompile.backward(loss_fn, model, X, y)
    optimizer.step()


PROGRAMS = {"golden": golden, "fused": fused_loops, "loop": loop, "hessian": hessian, "custom": custom_function,
            "module": module_gradient, "fit": fit, "train_step": train_step, "optimizer": optimizer_step}

if __name__ == "__main__":
    for name in sys.argv[2:] or PROGRAMS:
        PROGRAMS[name]()
