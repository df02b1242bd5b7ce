"""Each example script run as a user runs it: ``python examples/NAME.py`` in a fresh process, from
a folder of its own (plots land there), on the default backend with a cache folder of its own.
The in-process checks of what the examples compute are in ``tests/docs/test_examples.py``; this one checks
that the script as shipped runs to its last line and prints what it promises. Numba compiles
every example from scratch, so it is in the long profile (``-m slow``)."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

# script -> a pattern its output must contain (the last thing it promises)
PROMISES = {
    "quickstart.py": r"after 200 steps of gradient descent, loss = ",
    "logistic_regression.py": r"gradcheck: True",
    "newton_rosenbrock.py": r"minimum found at \(1\.0000000\d\d, 1\.0000000\d\d\)",
    "fit_spring.py": r"the generated gradient of the simulation:",
    "custom_function.py": r"gradcheck LogSumExp\s+: True",
    "train_digits.py": r"test accuracy 0\.9[6-9]\d\d",
    "cnn_digits.py": r"test accuracy 0\.9[7-9]\d\d",
    "jax_style_training.py": r"gradient keys: \[",
    "distributed_logistic.py": r"first call \(compiles\)",
    "distributed_newton_cg.py": r"\|gradient\| at the solution, by hand over the whole data: ",
}


def test_every_example_has_a_promise():
    assert sorted(PROMISES) == sorted(p.name for p in EXAMPLES.glob("*.py"))


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(PROMISES))
def test_the_example_runs_as_a_user_runs_it(script, tmp_path):
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"), MPLBACKEND="Agg")
    env.pop("ADCOMPILE_FUSE", None)
    env.pop("ADCOMPILE_TIERED", None)  # as a user's process: tiers on
    run = subprocess.run([sys.executable, str(EXAMPLES / script)], cwd=tmp_path, capture_output=True, text=True,
                         env=env, timeout=7200)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    assert re.search(PROMISES[script], run.stdout), run.stdout[-3000:]
