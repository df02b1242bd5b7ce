"""Every ``nn`` layer's gradient on the default backend equals the Python backend's and central
differences (``layer_gradients.py``, run as a user runs a script: a fresh process, the default
backend). numba compiles one gradient per layer for seconds each, so it is in the long profile
(``-m slow``)."""
import json
import os
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).with_name("layer_gradients.py")


@pytest.mark.slow
def test_every_layer_gradient_on_numba_equals_the_python_backend_and_differences(tmp_path):
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ADCOMPILE_FUSE", None)
    run = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, env=env, timeout=3600)
    assert run.returncode == 0, run.stderr[-3000:]
    reports = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert len(reports) == 19, reports
    for report in reports:
        assert report["backend_difference"] <= 1e-10 * report["scale"], report
        assert report["fd_difference"] <= 1e-6 * report["scale"], report
