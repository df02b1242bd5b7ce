"""Long generated lines (``adcompile/codegen/line_wrap.py``): broken within ``WIDTH`` columns,
every continuation line indented deeper than the first line of its statement, the code
unchanged (the wrapped source parses to the AST of the unbroken one).

Checked on random statements, on the generated source of the golden programs
(``test_golden_source.py``) at both stages, and on a gradient with long lines.
"""
import ast
import random

import numpy as np
import pytest

import adcompile
from adcompile.codegen import line_wrap
from adcompile.codegen.line_wrap import LEVEL, WIDTH, wrap_line
from test_golden_source import DIFFERENTIATED, LOWERED, staged_source


# ----------------------------------------------------------------- random statements
OPERATORS = ["+", "-", "*", "/", "@", "//", "%", "**", "==", "<", ">=", "!=", "and", "or"]


def random_expression(rng, depth=0):
    """A random expression in the shapes the code generator writes."""
    leaf = depth > 3 or rng.random() < 0.25
    if leaf:
        return rng.choice([f"{rng.choice('abxyz')}_{rng.randrange(40)}", f"{rng.random():.6f}",
                           f"x.shape[{rng.randrange(3)}]", f"_n_{rng.randrange(99)}", "np.float64"])
    kind = rng.randrange(7)
    sub = lambda: random_expression(rng, depth + 1)  # noqa: E731
    if kind < 3:
        return f"({sub()} {rng.choice(OPERATORS)} {sub()})"
    if kind == 3:
        return f"-{sub()}"
    if kind == 4:
        arguments = ", ".join(sub() for _ in range(rng.randrange(1, 4)))
        return f"{rng.choice(['np.exp', 'rt.unbroadcast', 'rt.matmul', 'np.where'])}({arguments})"
    if kind == 5:
        return f"{rng.choice('abxyz')}[{', '.join(sub() for _ in range(rng.randrange(1, 3)))}]"
    return f"np.empty(({sub()}, {sub()}), dtype=np.float64)"


def random_statement(rng):
    e = lambda: ast.unparse(ast.parse(random_expression(rng), mode="eval"))  # noqa: E731  (one line, as generated)
    return rng.choice([
        lambda: f"value = {e()}", lambda: f"acc += {e()}", lambda: f"out[i, j] = {e()}",
        lambda: f"return {e()}", lambda: f"return {e()}, {e()}", lambda: f"if {e()}:", lambda: f"while {e()}:",
        lambda: f"for i in range({e()}, {e()}):", lambda: f"rt.scatter_add(out, {e()}, {e()})",
        lambda: "def f(" + ", ".join(f"parameter_{k}" for k in range(rng.randrange(1, 40))) + "):",
    ])()


def as_module(lines, level, header):
    """``lines`` (one statement at ``level``) inside ``level`` nested blocks, so that it parses."""
    text = "".join(LEVEL * k + "if 1:\n" for k in range(level)) + "\n".join(lines) + "\n"
    return text + (LEVEL * (level + 1) + "pass\n" if header else "")


@pytest.mark.parametrize("seed", range(6))
def test_random_statements_keep_their_meaning_and_indent_continuations(seed):
    rng = random.Random(seed)
    broken = 0
    for _ in range(150):
        text, level = random_statement(rng), rng.randrange(4)
        indent, header = LEVEL * level, text.endswith(":")
        lines = wrap_line(indent, text)
        assert ast.dump(ast.parse(as_module(lines, level, header))) == \
            ast.dump(ast.parse(as_module([indent + text], level, header))), "\n".join(lines)
        assert lines[0].startswith(indent + text[:2])
        deeper = len(indent) + len(LEVEL) * (2 if header else 1)  # a header's continuation is not its body's level
        for line in lines[1:]:
            assert len(line) - len(line.lstrip()) >= deeper, "\n".join(lines)
        broken += len(lines) > 1
        assert len(lines) > 1 or len(indent + text) <= WIDTH or "(" not in text and "[" not in text
    assert broken > 30  # the statements are long enough to be broken


def test_a_short_line_and_a_comment_are_kept():
    assert wrap_line("    ", "x = a + b") == ["    x = a + b"]
    comment = "# grad of: " + " + ".join(f"term_{k}" for k in range(40))
    assert wrap_line("        ", comment) == ["        " + comment]


def test_lines_break_at_the_loosest_operator_within_the_width():
    text = "if " + " and ".join(f"(x.shape[{k}] == _n_{k} or y.shape[{k}] == _n_{k})" for k in range(4)) + ":"
    lines = wrap_line("    ", text)
    assert len(lines) > 1 and all(len(line) <= WIDTH for line in lines), lines
    assert all(line.lstrip().startswith("and ") for line in lines[1:]), lines


# ----------------------------------------------------------------- generated source
def long_terms(first_layer_weights, second_layer_weights, third_layer_weights, fourth_layer_weights,
               output_scale):
    return np.sum(np.tanh(first_layer_weights * second_layer_weights + third_layer_weights * fourth_layer_weights)
                  * output_scale + np.exp(-first_layer_weights * third_layer_weights)
                  * np.sin(second_layer_weights * fourth_layer_weights * output_scale))


ARGS = tuple(np.linspace(0.1, 0.9, 4) + k for k in range(4)) + (0.7,)


def statement_lines(text):
    """``(first line, [continuation lines])`` of every statement of ``text``: the lines a
    simple statement spans after its first, and those of a compound statement's header."""
    tree, lines = ast.parse(text), text.splitlines()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            last = node.body[0].lineno - 1 if hasattr(node, "body") else node.end_lineno
            last = min(last, node.end_lineno)
            following = [lines[k - 1] for k in range(node.lineno + 1, last + 1)
                         if lines[k - 1].strip() and not lines[k - 1].lstrip().startswith("#")]
            yield lines[node.lineno - 1], following


def indentation(line):
    return len(line) - len(line.lstrip())


def generated_sources():
    """The generated source of the golden programs at both stages, and of a function with long
    lines and its gradient."""
    sources = {f"{name} differentiated": staged_source(DIFFERENTIATED, name, "differentiated")
               for name in DIFFERENTIATED}
    sources |= {f"{name} lowered": staged_source(LOWERED, name, "lowered") for name in LOWERED}
    compiled = adcompile.compile(long_terms, backend="python")
    sources["long_terms"] = adcompile.source(compiled, *ARGS)
    sources["long_terms gradient"] = adcompile.source(adcompile.grad(compiled, wrt=(0, 1, 2, 3, 4)), *ARGS)
    return sources


@pytest.fixture
def default_lowering(monkeypatch):
    for variable in ("ADCOMPILE_FUSE", "ADCOMPILE_REUSE"):
        monkeypatch.delenv(variable, raising=False)


def test_generated_continuation_lines_are_indented_under_their_statement(default_lowering):
    continued = 0
    for name, text in generated_sources().items():
        for first, following in statement_lines(text):
            continued += len(following)
            for line in following:
                assert indentation(line) > indentation(first), f"{name}:\n{first}\n{line}"
        long_lines = [line for line in text.splitlines()[2:] if len(line) > WIDTH and not line.lstrip().startswith("#")]
        assert not long_lines, f"{name}: {long_lines}"
    assert continued >= 10  # the programs have long statements to break


def test_wrapping_changes_only_the_layout_of_the_code_that_runs(default_lowering, monkeypatch):
    wrapped = generated_sources()
    monkeypatch.setattr(line_wrap, "WIDTH", 10 ** 6)
    unbroken = generated_sources()
    assert wrapped.keys() == unbroken.keys()
    changed = 0
    for name, text in wrapped.items():
        code = compile(text, f"{name}.py", "exec")  # valid Python
        assert code is not None
        assert ast.dump(ast.parse(text)) == ast.dump(ast.parse(unbroken[name])), name
        changed += text != unbroken[name]
    assert changed >= 3


def test_a_wrapped_gradient_runs_and_is_right():
    gradient = adcompile.grad(adcompile.compile(long_terms, backend="python"), wrt=(0, 1, 2, 3, 4))
    text = adcompile.source(gradient, *ARGS)
    assert any(following for _, following in statement_lines(text)), text
    assert adcompile.source_path(gradient, *ARGS).read_text() == text  # the wrapped file is what runs
    results = gradient(*ARGS)
    for k, got in enumerate(results):
        x = np.asarray(ARGS[k], dtype=np.float64)
        expected = np.zeros(x.shape)
        for index in np.ndindex(*x.shape):
            step = np.zeros(x.shape)
            step[index] = 1e-6
            plus, minus = list(ARGS), list(ARGS)
            plus[k], minus[k] = x + step, x - step
            if not x.shape:
                plus[k], minus[k] = float(plus[k]), float(minus[k])
            expected[index] = (long_terms(*plus) - long_terms(*minus)) / 2e-6
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
