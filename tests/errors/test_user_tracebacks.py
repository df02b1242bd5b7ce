"""An error told in the user's terms comes without adcompile's own traceback frames: a script
that fails shows the user's call, one line of adcompile's (whose comment says how to see more)
and the located message; ``ADCOMPILE_DEBUG=1`` shows the full internal traceback and chain.
Run as users run them: small scripts in fresh subprocesses, on the default (numba) backend."""
import os
import subprocess
import sys
import textwrap
import traceback

import numpy as np
import pytest

import adcompile

ADCOMPILE_FOLDER = os.path.dirname(adcompile.__file__)
REPOSITORY = os.path.dirname(ADCOMPILE_FOLDER)

COMPILE_ERROR = '''
    import numpy as np
    import adcompile


    @adcompile.compile
    def loss(w, X):
        value = np.sum((X @ w) ** 2)
        value.backward()
        return value


    loss(np.ones(3), np.ones((4, 3)))
'''

RUN_TIME_ERROR = '''
    import numpy as np
    import adcompile


    @adcompile.compile
    def predict(A, B):
        return np.sum(np.tanh(A @ B))


    adcompile.grad(predict)(np.ones((3, 4)), np.ones((5, 2)))
'''


def run_script(tmp_path, text, debug=None):
    script = tmp_path / "user_script.py"
    script.write_text(textwrap.dedent(text))
    env = dict(os.environ, PYTHONPATH=REPOSITORY, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ADCOMPILE_DEBUG", None)
    if debug is not None:
        env["ADCOMPILE_DEBUG"] = debug
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600)
    assert result.returncode == 1, result.stderr
    return str(script), result.stderr


def adcompile_frames(stderr):
    return [line for line in stderr.splitlines() if line.strip().startswith(f'File "{ADCOMPILE_FOLDER}')]


@pytest.mark.parametrize("program, call, message", [
    (COMPILE_ERROR, "loss(np.ones(3), np.ones((4, 3)))", "numbers have no supported attribute 'backward'"),
    (RUN_TIME_ERROR, "adcompile.grad(predict)(np.ones((3, 4)), np.ones((5, 2)))",
     "matmul (@): A has shape (3, 4) and B has shape (5, 2)"),
])
def test_a_users_error_shows_their_call_and_the_located_message(tmp_path, program, call, message):
    script, stderr = run_script(tmp_path, program)
    assert call in stderr and message in stderr and f'File "{script}"' in stderr
    assert len(adcompile_frames(stderr)) == 1, stderr
    assert "ADCOMPILE_DEBUG=1 shows them" in stderr
    assert "The above exception" not in stderr and "During handling" not in stderr
    assert len(stderr.splitlines()) <= 12, stderr
    # a debug word other than 1 (the IR printer's "ir") does not bring the frames back
    _, with_ir = run_script(tmp_path, program, debug="ir")
    assert len(adcompile_frames(with_ir)) == 1, with_ir


@pytest.mark.parametrize("program", [COMPILE_ERROR, RUN_TIME_ERROR])
def test_adcompile_debug_shows_the_full_internal_traceback(tmp_path, program):
    _, stderr = run_script(tmp_path, program, debug="1")
    frames = adcompile_frames(stderr)
    assert len(frames) >= 5, stderr
    assert any("/frontend/" in frame or "/api/run_errors" in frame or "/api/specialised" in frame or "/api/compiled" in frame for frame in frames)


def product(A, B):
    return np.sum(A @ B)


def test_a_users_own_frame_between_two_boundaries_is_kept():
    """A closure of the user's, called by ``optimizer.step``, whose compiled call fails: the
    closure's frame stays in the traceback, adcompile's frames go."""
    f = adcompile.compile(product, backend="python")
    param = adcompile.Parameter(np.ones(2))
    optimizer = adcompile.optim.SGD([param], lr=0.1)

    def closure():
        return f(np.ones((3, 4)), np.ones((5, 2)))

    with pytest.raises(adcompile.AdCompileError) as raised:
        optimizer.step(closure)
    frames = traceback.extract_tb(raised.value.__traceback__)
    names = [frame.name for frame in frames]
    assert "closure" in names, names
    inside = [frame for frame in frames if frame.filename.startswith(ADCOMPILE_FOLDER)]
    assert len(inside) == 1 and "user_error(error)" in inside[0].line, inside  # the outer boundary's raise
    assert raised.value.__cause__ is None
