"""Golden tests of ``adcompile.source``: the generated code, reviewed as text, at both stages.

``source(fn, *args)`` shows the *differentiated* stage by default: the Python generated from the
differentiated, simplified IR, which ``backend="python"`` runs. ``stage="lowered"`` shows what
numba runs: elementwise statements fused into loops behind run-time length checks, buffers
reused. Each program of ``DIFFERENTIATED`` has its expected differentiated source in
``tests/golden/<name>_differentiated.py``, and each of ``LOWERED`` (a logistic regression, an
MLP, a loop, a Rosenbrock Hessian...) its lowered source in ``tests/golden/<name>_lowered.py``;
a change in the generated code shows up as a diff in the test failure (and in review when the
golden files are regenerated). Each golden text is checked to be the file that runs on its
backend (Python for the differentiated stage, numba for the lowered one), and what it computes
is compared with central differences of the user's function. Regenerate all of them after an
intended change with one command:

    ADCOMPILE_UPDATE_GOLDEN=1 python -m pytest -q tests/codegen/test_golden_source.py -p no:cacheprovider

Independently of the golden text, the generated source must be readable: the user's names
kept, adjoints named ``b<name>``, a ``# grad of: <line>`` comment per adjoint block, valid
Python without dead assignments.
"""
import ast
import difflib
import os
from pathlib import Path

import numpy as np
import pytest

import adcompile
from oracles import gradient_by_differences, jacobian_by_differences
from running_minimum import nearest_centre_cost

GOLDEN_DIR = Path(__file__).parents[1] / "golden"
UPDATE = os.environ.get("ADCOMPILE_UPDATE_GOLDEN") == "1"


def logistic_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def running_sum_of_squares(x, decay):
    total = 0.0
    for i in range(x.shape[0]):
        total = total * decay + x[i] * x[i]
    return total


def huber(r, delta):
    a = np.abs(r)
    if a <= delta:
        loss = 0.5 * r * r
    else:
        loss = delta * (a - 0.5 * delta)
    return loss


def softmax_cross_entropy(logits, labels):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.mean(log_probs[np.arange(logits.shape[0]), labels])


RNG = np.random.default_rng(7)
CASES = {
    "logistic_loss": (logistic_loss, (RNG.standard_normal(3), RNG.standard_normal((5, 3)),
                                      np.array([1.0, 0.0, 1.0, 1.0, 0.0])), 0),
    "running_sum_of_squares": (running_sum_of_squares, (RNG.standard_normal(6), 0.9), (0, 1)),
    "huber": (huber, (0.4, 1.0), 0),
    "softmax_cross_entropy": (softmax_cross_entropy, (RNG.standard_normal((4, 3)), np.array([0, 2, 2, 1])), 0),
}


def mlp_loss(W1, b1, W2, X, y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2
    return np.mean((out - y) ** 2)


def momentum_steps(x, v, lr):
    for i in range(5):
        v = 0.9 * v + np.sin(x)
        x = x - lr * v
    return np.sum(x * x)


def logsumexp_rows(X):
    m = np.max(X, axis=1, keepdims=True)
    return np.sum(m[:, 0] + np.log(np.sum(np.exp(X - m), axis=1)))


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_gradient(x):
    """By hand: the oracle of the Hessian (its central differences), independent of adcompile."""
    d = x[1:] - x[:-1] ** 2
    g = np.zeros_like(x)
    g[:-1] += -400.0 * x[:-1] * d - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * d
    return g


# Programs pinned at both stages: name -> (function, example arguments, transform, wrt).
LOWERED = {
    "logistic_loss": (logistic_loss, CASES["logistic_loss"][1], adcompile.grad, 0),
    "mlp_loss": (mlp_loss, (RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((4, 2)),
                            RNG.standard_normal((5, 3)), RNG.standard_normal((5, 2))), adcompile.grad, 0),
    "momentum_steps": (momentum_steps, (RNG.standard_normal(4), RNG.standard_normal(4), 0.1), adcompile.grad, 0),
    "logsumexp_rows": (logsumexp_rows, (RNG.standard_normal((4, 3)),), adcompile.grad, 0),
    "rosenbrock_hessian": (rosenbrock, (RNG.standard_normal(4),), adcompile.hessian, 0),
    "nearest_centre_cost": (nearest_centre_cost, (RNG.standard_normal((3, 2)), RNG.standard_normal((6, 2))),
                            adcompile.grad, (0, 1)),
}
# Programs pinned at the differentiated stage: the gradients of CASES, and the programs above.
DIFFERENTIATED = {**{name: (fn, args, adcompile.grad, wrt) for name, (fn, args, wrt) in CASES.items()}, **LOWERED}


def grad_source(name):
    fn, args, wrt = CASES[name]
    return adcompile.source(adcompile.grad(adcompile.compile(fn, backend="python"), wrt=wrt), *args)


@pytest.fixture
def default_lowering(monkeypatch):
    """The environment of a user's process: the lowering options at their defaults."""
    for variable in ("ADCOMPILE_FUSE", "ADCOMPILE_REUSE"):
        monkeypatch.delenv(variable, raising=False)


def derived_function(table, name, **options):
    """``table[name]``'s transform of the user's function, compiled with ``options``."""
    fn, _, transform, wrt = table[name]
    return transform(adcompile.compile(fn, **options), wrt=wrt)


def staged_source(table, name, stage):
    """The source at ``stage`` of the default compile (numba, lowering on) of ``table[name]``;
    building it compiles nothing (numba compiles at the first call)."""
    return adcompile.source(derived_function(table, name), *table[name][1], stage=stage)


def _check_golden(text, path):
    if UPDATE or not path.exists():
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(text)
        if not UPDATE:
            pytest.fail(f"{path} did not exist and was written; review it and rerun")
        return
    expected = path.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            f"golden/{path.name}", "generated"))
        pytest.fail(f"generated source differs from {path} (ADCOMPILE_UPDATE_GOLDEN=1 to accept):\n{diff}")


def golden_path(name, stage):
    return GOLDEN_DIR / f"{name}_{stage}.py"


@pytest.mark.parametrize("name", sorted(DIFFERENTIATED))
def test_differentiated_source_matches_golden_file(name, default_lowering):
    default = adcompile.source(derived_function(DIFFERENTIATED, name), *DIFFERENTIATED[name][1])
    assert default == staged_source(DIFFERENTIATED, name, "differentiated")  # the default stage
    _check_golden(default, golden_path(name, "differentiated"))


@pytest.mark.parametrize("name", sorted(LOWERED))
def test_lowered_source_matches_golden_file(name, default_lowering):
    _check_golden(staged_source(LOWERED, name, "lowered"), golden_path(name, "lowered"))


def _assert_matches_oracle(name, table, result):
    """``result`` against central differences of the user's function (for a Hessian: of its
    gradient, written by hand), for each argument it differentiates."""
    fn, args, transform, wrt = table[name]
    if transform is adcompile.hessian:
        assert fn is rosenbrock
        expected = jacobian_by_differences(rosenbrock_gradient, args, wrt)
        np.testing.assert_allclose(result, expected, rtol=1e-5, atol=1e-6)
        return
    results = result if isinstance(wrt, tuple) else (result[0] if isinstance(result, tuple) else result,)
    for got, k in zip(results, wrt if isinstance(wrt, tuple) else (wrt,), strict=True):
        np.testing.assert_allclose(got, gradient_by_differences(fn, args, k), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", sorted(DIFFERENTIATED))
def test_differentiated_golden_source_is_what_python_runs_and_is_right(name, default_lowering):
    """The pinned differentiated source is the file ``backend="python"`` runs: called, it agrees
    with central differences of the user's function (of its gradient, for a Hessian)."""
    compiled = derived_function(DIFFERENTIATED, name, backend="python")
    args = DIFFERENTIATED[name][1]
    result = compiled(*args)
    assert adcompile.source_path(compiled).read_text() == golden_path(name, "differentiated").read_text()
    _assert_matches_oracle(name, DIFFERENTIATED, result)


@pytest.mark.parametrize("name", sorted(LOWERED))
def test_lowered_golden_source_is_what_numba_runs_and_is_right(name, default_lowering):
    """The pinned lowered source is the file numba compiles and runs (not a display of it; no
    tiers: the first call runs numba's code): called, it agrees with central differences."""
    compiled = derived_function(LOWERED, name, tiered=False)
    result = compiled(*LOWERED[name][1])
    assert adcompile.source_path(compiled).read_text() == golden_path(name, "lowered").read_text()
    _assert_matches_oracle(name, LOWERED, result)


def _function_def(text):
    tree = ast.parse(text)
    defs = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert len(defs) == 1
    return defs[0]


def _user_names(fn):
    tree = ast.parse(__import__("inspect").getsource(fn))
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)} \
        | {a.arg for a in tree.body[0].args.args}


@pytest.mark.parametrize("name", sorted(CASES))
def test_source_is_readable(name):
    fn, args, wrt = CASES[name]
    text = grad_source(name)
    compile(text, f"{name}_grad.py", "exec")  # valid Python
    definition = _function_def(text)
    assert definition.name == f"{fn.__name__}_grad"
    assert [a.arg for a in definition.args.args] == list(__import__("inspect").signature(fn).parameters)
    names = {node.id for node in ast.walk(definition) if isinstance(node, ast.Name)}
    wrt_names = [definition.args.args[k].arg for k in (wrt if isinstance(wrt, tuple) else (wrt,))]
    for param in wrt_names:
        assert "b" + param in names, f"no adjoint named b{param} in:\n{text}"
    # every user name shows, as itself or as its adjoint (values the gradient does not read
    # are not computed: no dead code)
    lost = {n for n in _user_names(fn) if n not in names and "b" + n not in names}
    assert not lost, f"user names lost: {lost}\n{text}"
    comments = [line.strip() for line in text.splitlines() if line.strip().startswith("# grad of: ")]
    assert comments, text
    source_lines = {line.strip() for line in __import__("inspect").getsource(fn).splitlines()}
    for comment in comments:
        assert comment[len("# grad of: "):] in source_lines, f"comment does not quote a source line: {comment}"
    assert "# forward" in text and "# backward" in text


def _assigned_never_read(definition):
    """Names assigned but never read for their value. Updating a variable does not read it for
    anything else: ``b += g`` and ``b[i] += g`` (or ``b[i] = g``) leave ``b`` dead unless it is
    also read elsewhere (returned, used in an expression, indexed to read an element)."""
    stored, loaded = set(), set()
    updated_bases = set()  # ids of Name nodes that only say which array an element write goes to
    for node in ast.walk(definition):
        targets = node.targets if isinstance(node, ast.Assign) else \
            [node.target] if isinstance(node, ast.AugAssign) else []
        for target in targets:
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                updated_bases.add(id(target.value))
                stored.add(target.value.id)
    for node in ast.walk(definition):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Store):
                stored.add(node.id)  # an AugAssign target is a Store: it is not a read
            elif id(node) not in updated_bases:
                loaded.add(node.id)
    return stored - loaded - {"_"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_dead_assignments(name):
    text = grad_source(name)
    dead = _assigned_never_read(_function_def(text))
    assert not dead, f"variables assigned but never read: {sorted(dead)}\n{text}"


def test_dead_code_check_counts_accumulators_and_element_writes_as_dead():
    text = "def f(x):\n    a = x * 2\n    a += x\n    b = x * 0\n    b[0] += 1.0\n    c = x + 1\n    c[1] = 0.0\n" \
           "    return c\n"
    assert _assigned_never_read(_function_def(text)) == {"a", "b"}
