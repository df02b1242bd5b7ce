"""Golden tests of ``adcompile.source``: the generated gradient code, reviewed as text.

Each function below has its expected gradient source in ``tests/golden/<name>_grad.py``; a
change in the generated code shows up as a diff in the test failure (and in review when
the golden files are regenerated). Regenerate them after an intended change with

    ADCOMPILE_UPDATE_GOLDEN=1 pytest tests/test_golden_source.py

Independently of the golden text, the generated source must be readable: the user's names
kept, adjoints named ``b<name>``, a ``# grad of: <line>`` comment per adjoint block, valid
Python that runs as plain Python and agrees with finite differences.
"""
import ast
import difflib
import os
from pathlib import Path

import numpy as np
import pytest

import adcompile

GOLDEN_DIR = Path(__file__).parent / "golden"
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


def grad_source(name):
    fn, args, wrt = CASES[name]
    return adcompile.source(adcompile.grad(adcompile.compile(fn, backend="python"), wrt=wrt), *args)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_golden_file(name):
    text = grad_source(name)
    path = GOLDEN_DIR / f"{name}_grad.py"
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


def _central_differences(fn, args, k, eps=1e-6):
    """The gradient of the plain Python ``fn`` with respect to argument ``k``."""
    x = np.asarray(args[k], dtype=np.float64)
    gradient = np.zeros_like(x)
    for index in np.ndindex(*x.shape) if x.shape else [()]:
        plus, minus = list(args), list(args)
        e = np.zeros_like(x)
        e[index] = eps
        plus[k], minus[k] = (x + e, x - e) if x.shape else (float(x + e), float(x - e))
        gradient[index] = (fn(*plus) - fn(*minus)) / (2 * eps)
    return gradient


def test_dead_code_check_counts_accumulators_and_element_writes_as_dead():
    text = "def f(x):\n    a = x * 2\n    a += x\n    b = x * 0\n    b[0] += 1.0\n    c = x + 1\n    c[1] = 0.0\n" \
           "    return c\n"
    assert _assigned_never_read(_function_def(text)) == {"a", "b"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_runs_as_plain_python_and_is_right(name):
    """The golden source, run as plain Python, against central differences of the user's
    function itself (an oracle independent of adcompile)."""
    fn, args, wrt = CASES[name]
    namespace = {}
    exec(compile(grad_source(name), f"{name}_grad.py", "exec"), namespace)
    grads = namespace[f"{fn.__name__}_grad"](*args)
    for g, k in zip(grads, wrt if isinstance(wrt, tuple) else (wrt,)):
        np.testing.assert_allclose(g, _central_differences(fn, args, k), rtol=1e-6, atol=1e-8)
