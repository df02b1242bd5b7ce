"""A user's CNN training script (``cnn_training.py``), run as a user runs it: a fresh process on
the default backend (numba, lowering on). Its first numba compile of the CNN gradient takes
minutes, so it is in the long profile (``-m slow``)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).with_name("cnn_training.py")


@pytest.mark.slow
def test_a_cnn_trains_on_the_default_backend(tmp_path):
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ADCOMPILE_FUSE", None)
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=3600)
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["max_backend_difference"] < 1e-10, report
    assert report["max_difference_to_central_differences"] < 1e-6, report
    assert report["fit_last_loss"] < 0.5 * report["fit_first_loss"], report
    assert report["loop_last_loss"] < 0.5 * report["loop_first_loss"], report
