"""A user's CNN training script (``cnn_training.py``), run as a user runs it: a fresh process on
the default backend (numba, lowering on). Its first numba compile of the CNN gradient takes
minutes, so it is in the long profile (``-m slow``)."""
import pytest
from user_scripts import run_script


@pytest.mark.slow
def test_a_cnn_trains_on_the_default_backend(tmp_path):
    report = run_script("cnn_training.py", tmp_path)[-1]
    assert report["max_backend_difference"] < 1e-10, report
    assert report["max_difference_to_central_differences"] < 1e-6, report
    assert report["fit_last_loss"] < 0.5 * report["fit_first_loss"], report
    assert report["loop_last_loss"] < 0.5 * report["loop_first_loss"], report
