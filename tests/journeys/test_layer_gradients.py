"""Every ``nn`` layer's gradient on the default backend equals the Python backend's and central
differences (``layer_gradients.py``, run as a user runs a script: a fresh process, the default
backend). numba compiles one gradient per layer for seconds each, so it is in the long profile
(``-m slow``)."""
import pytest
from user_scripts import run_script


@pytest.mark.slow
def test_every_layer_gradient_on_numba_equals_the_python_backend_and_differences(tmp_path):
    reports = run_script("layer_gradients.py", tmp_path)
    assert len(reports) == 19, reports
    for report in reports:
        assert report["backend_difference"] <= 1e-10 * report["scale"], report
        assert report["fd_difference"] <= 1e-6 * report["scale"], report
