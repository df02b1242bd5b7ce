"""The command line (issue 12): ``adcompile source``, ``check``, ``cache``, ``--version``.

Most tests call ``adcompile.cli.main`` in-process with ``--backend python`` (numba adds nothing
to what is checked); three run ``python -m adcompile`` and the console script in subprocesses,
bounded by timeouts.
"""
import io
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import adcompile
from adcompile.cli import main

PROGRAM = textwrap.dedent('''
    import numpy as np
    import adcompile


    def scaled(x, k, n):
        s = 0.0
        for i in range(n):
            s += np.sum(np.sin(x) * k) / (i + 1)
        return s


    def weighted_exp(x, y):
        return np.sum(np.exp(x) * y)


    def with_default(x, power=2.0):
        return np.sum(x ** power)


    class WrongCube(adcompile.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return np.sum(x ** 3)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3.0 * x  # wrong on purpose: the derivative is 3 x ** 2


    def wrong(x):
        return WrongCube.apply(x)


    def rejected(x):
        try:
            return x
        except ValueError:
            return x
''')


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "cli_program.py"
    path.write_text(PROGRAM)
    return str(path)


def run(*argv, out=None):
    out, err = out or io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


# ----------------------------------------------------------------- source
def test_source_prints_the_gradient_for_the_given_argument_types(program):
    status, out, err = run("source", f"{program}:scaled", "--grad", "--args", "x=(4,) k=() n=int:3",
                           "--backend", "python")
    assert status == 0, err
    assert "def scaled_grad(x, k, n):" in out and "bx += " in out and "\x1b[" not in out


def test_source_variants_wrt_hessian_jvp_and_the_forward(program):
    spec = ["--args", "x=(4,) k=() n=int:3", "--backend", "python"]
    _, forward, _ = run("source", f"{program}:scaled", *spec)
    assert "def scaled(x, k, n):" in forward
    _, wrt_k, _ = run("source", f"{program}:scaled", "--wrt", "k", *spec)
    assert "return bk" in wrt_k and "bx" not in wrt_k
    _, hessian, _ = run("source", f"{program}:scaled", "--hessian", *spec)
    assert "def scaled_grad_jvp(x, k, n, dx):" in hessian
    _, jvp, _ = run("source", f"{program}:scaled", "--jvp", "--wrt", "x", *spec)
    assert "def scaled_jvp(x, k, n, dx):" in jvp


def test_source_defaults_to_float_scalars_and_parameter_defaults(program):
    status, out, _ = run("source", f"{program}:with_default", "--grad", "--backend", "python")
    assert status == 0 and "def with_default_grad(x, power):" in out


def test_source_is_highlighted_on_a_terminal_unless_no_color(program):
    argv = ["source", f"{program}:scaled", "--args", "x=(4,) k=() n=int:3", "--backend", "python"]
    _, colored, _ = run(*argv, out=Terminal())
    assert "\x1b[" in colored and "scaled" in colored
    _, plain, _ = run(*argv, "--no-color", out=Terminal())
    assert "\x1b[" not in plain and "def scaled(x, k, n):" in plain


def test_ir_prints_every_stage_down_to_the_source(program):
    status, out, _ = run("source", f"{program}:scaled", "--grad", "--ir", "--args", "x=(4,) k=() n=int:3",
                         "--backend", "python")
    assert status == 0
    headers = [line for line in out.splitlines() if line.startswith("=== ")]
    assert headers[0] == "=== parsed ===" and headers[1] == "=== grad(scaled): transformed ==="
    assert headers[-1] == "=== lowered ===" and len(headers) >= 4
    assert "def scaled(x:f8[:], k:f8, n:i8):" in out and "def scaled_grad(x, k, n):" in out


def test_stage_chooses_the_differentiated_the_lowered_source_or_an_ir_stage(program):
    argv = ["source", f"{program}:weighted_exp", "--grad", "--args", "x=(4,) y=(4,)", "--no-color"]
    status, default, err = run(*argv)
    assert status == 0, err
    assert run(*argv, "--stage", "differentiated")[1] == default
    assert "def weighted_exp_grad(x, y):" in default and "for i in range(" not in default
    status, lowered, err = run(*argv, "--stage", "lowered")  # numba's code: a fused loop and its fallback
    assert status == 0, err
    assert "def weighted_exp_grad(x, y):" in lowered and "for i in range(" in lowered and "else:" in lowered
    status, parsed, _ = run(*argv, "--stage", "parsed")
    assert status == 0 and parsed.startswith("def weighted_exp(x:f8[:], y:f8[:]):\n") and parsed.endswith("]\n")


def test_an_unknown_stage_is_a_usage_error_listing_the_stages(program):
    status, _, err = run("source", f"{program}:scaled", "--grad", "--args", "x=(4,) k=() n=int:3",
                         "--backend", "python", "--stage", "optimized")
    assert status == 2 and "--stage optimized: unknown stage" in err, err
    assert "'parsed', 'grad(scaled): transformed'" in err and "'differentiated', 'lowered'" in err
    assert run("source", f"{program}:scaled", "--stage", "parsed", "--ir")[0] == 2  # one or the other


# ----------------------------------------------------------------- check
def test_check_passes_with_exit_status_0(program):
    status, out, _ = run("check", f"{program}:scaled", "--args", "x=(4,) k=() n=int:3", "--backend", "python")
    assert status == 0
    assert out.startswith("PASS  scaled: gradient with respect to x, k match central finite differences")


def test_check_order_2(program):
    status, out, _ = run("check", f"{program}:scaled", "--args", "x=(3,) k=() n=int:2", "--order", "2",
                         "--backend", "python")
    assert status == 0 and "first and second derivatives" in out


def test_check_fails_and_names_the_worst_mismatch(program):
    status, out, _ = run("check", f"{program}:wrong", "--args", "x=(5,)", "--seed", "3", "--backend", "python")
    assert status == 1 and out.startswith("FAIL  wrong:")
    # the same random inputs: the worst element is where 3x and 3x**2 differ most, relative to
    # gradcheck's tolerance (atol 1e-7 + rtol 1e-5 * |3x**2|, both times 10)
    x = np.random.default_rng(3).uniform(0.5, 1.5, 5)
    excess = np.abs(3 * x - 3 * x ** 2) / (1e-6 + 1e-4 * 3 * x ** 2)
    worst = int(np.argmax(excess))
    assert f"worst mismatch: argument 'x' at index ({worst},): derivative {float(3 * x[worst])!r}"[:70] in out, out


# ----------------------------------------------------------------- errors
@pytest.mark.parametrize("argv, message", [
    (["source", "no_such_file.py:f"], "no such file: no_such_file.py"),
    (["source", "{program}:nothere"], "has no function 'nothere' (it defines: WrongCube, rejected, scaled"),
    (["source", "{program}"], "expected FILE.py:FUNCTION"),
    (["check", "{program}:scaled"], "check needs --args"),
    (["check", "{program}:scaled", "--args", "x=(3;4) k=() n=int:2"], "a shape is a tuple of integers"),
    (["check", "{program}:scaled", "--args", "x=(3,) k=()"], "no entry for parameter 'n'"),
    (["check", "{program}:scaled", "--args", "x=(3,) k=() n=int:2 z=()"], "--args names 'z'"),
    (["check", "{program}:scaled", "--args", "x=(3,) k=() n=int:2", "--range", "2,1"], "LOW must be below"),
    (["check", "{program}:scaled", "--args", "x=int64:(3,) k=int:1 n=int:2"], "no float argument"),
    (["source", "{program}:scaled", "--wrt", "q"], "--wrt q: scaled has no parameter 'q'"),
])
def test_usage_errors_exit_with_status_2_and_say_what_was_wrong(program, argv, message):
    status, _, err = run(*[part.format(program=program) for part in argv])
    assert status == 2 and message in err, err
    assert "Traceback" not in err


def test_argparse_usage_errors_exit_with_status_2(program, capsys):
    assert run("source", f"{program}:scaled", "--grad", "--hessian")[0] == 2
    assert run("frobnicate")[0] == 2
    assert "invalid choice" in capsys.readouterr().err


def test_a_rejected_function_prints_the_located_error_without_a_traceback(program):
    status, _, err = run("source", f"{program}:rejected")
    assert status == 1
    assert err.startswith("adcompile source: UnsupportedSyntaxError: try/except is not supported")
    assert f'File "{program}", line' in err and "Traceback" not in err


# ----------------------------------------------------------------- cache
def test_cache_shows_and_clears_the_folder(program, tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(folder))
    run("source", f"{program}:scaled", "--args", "x=(4,) k=() n=int:3", "--backend", "python")
    status, out, _ = run("cache")
    assert status == 0 and out.startswith(f"cache folder: {folder} (persistent)")
    assert "in 1 generated modules" in out and "scaled_" in out
    status, out, _ = run("cache", "--clear")
    assert status == 0 and "removed 1 entry" in out
    assert list(folder.glob("*.py")) == []


# ----------------------------------------------------------------- subprocesses
def subprocess_run(argv, **kwargs):
    env = dict(os.environ, NO_COLOR="")
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env, **kwargs)


def test_python_dash_m_prints_the_version():
    result = subprocess_run([sys.executable, "-m", "adcompile", "--version"])
    assert result.returncode == 0
    assert result.stdout.startswith(f"adcompile {adcompile.__version__} (numba ")


def test_python_dash_m_rejected_function_piped(program):
    result = subprocess_run([sys.executable, "-m", "adcompile", "source", f"{program}:rejected"])
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "try/except is not supported" in result.stderr
    result = subprocess_run([sys.executable, "-m", "adcompile", "source", f"{program}:scaled", "--grad",
                             "--args", "x=(4,) k=() n=int:3"])
    assert result.returncode == 0 and "def scaled_grad(x, k, n):" in result.stdout
    assert "\x1b[" not in result.stdout  # piped: plain text


def test_console_script_is_declared_and_runs():
    from importlib.metadata import entry_points
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "adcompile"]
    assert script.value == "adcompile.cli:main"
    executable = os.path.join(os.path.dirname(sys.executable), "adcompile")
    if not os.path.exists(executable):
        pytest.skip("the console script is not installed next to this Python")
    result = subprocess_run([executable, "cache"])
    assert result.returncode == 0 and result.stdout.startswith("cache folder: ")
