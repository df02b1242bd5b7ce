"""``adcompile source FILE.py:F --grad`` without ``--args``: a function that needs arrays gets a
usage error naming the parameters used as arrays and the command to run with ``--args``, not
the compiler's error blaming the user's line; and the suggested command works."""
import io
import shlex
import textwrap

import pytest

from adcompile.cli import main

PROGRAM = textwrap.dedent('''
    import numpy as np


    def layer(W, x):
        return np.sum(np.tanh(W @ x))


    def mean_of(x, w):
        n = x.shape[0]
        return np.sum(x * w) / n


    def first_two(x, k):
        return x[0] * x[1] * k


    def scalar(x, k):
        return x * x * k


    def prints(x):
        print(x)
        return x
''')


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "user_program.py"
    path.write_text(PROGRAM)
    return path


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(list(argv), out=out, err=err)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("function, named, line", [
    ("layer", "W, x are used as arrays", "return np.sum(np.tanh(W @ x))"),
    ("mean_of", "x is used as an array", "n = x.shape[0]"),
    ("first_two", "x is used as an array", "return x[0] * x[1] * k"),
])
def test_a_function_that_needs_arrays_is_told_how_to_pass_their_shapes(program, function, named, line):
    status, out, err = run("source", f"{program}:{function}", "--grad", "--backend", "python")
    assert status == 2 and out == ""
    assert named in err and line in err and "without --args every argument is a float scalar" in err
    assert "tuple index out of range" not in err.splitlines()[0]
    suggested, = [text for text in err.splitlines() if text.startswith("    adcompile source ")]
    argv = shlex.split(suggested)[1:]
    status, out, err = run(*argv)  # the command it suggests compiles
    assert status == 0, err
    assert "def " in out


def test_scalar_functions_and_other_errors_are_unchanged(program):
    status, out, _ = run("source", f"{program}:scalar", "--grad", "--backend", "python")
    assert status == 0 and "def " in out
    status, _, err = run("source", f"{program}:prints", "--grad", "--backend", "python")
    assert status == 1 and "print" in err and "--args" not in err
