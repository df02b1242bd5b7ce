"""The examples run and reach their goals (each one's ``main`` returns what it found)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart(capsys):
    load("quickstart").main()
    out = capsys.readouterr().out
    assert "def loss_grad(w, X, y):" in out and "gradcheck: True" in out


def test_newton_on_rosenbrock_reaches_the_minimum(capsys):
    x = load("newton_rosenbrock").main()
    np.testing.assert_allclose(x, np.ones_like(x), atol=1e-6)


def test_fitting_a_spring_simulation_recovers_its_parameters(capsys):
    k, c = load("fit_spring").main()
    assert abs(k - 4.0) < 1e-6 and abs(c - 0.3) < 1e-6


def test_logistic_regression_trains(capsys):
    assert load("logistic_regression").main() > 0.9


@pytest.mark.parametrize("name", ["custom_function"])
def test_custom_function_example(name, capsys):
    load(name).main()
    assert "True" in capsys.readouterr().out
