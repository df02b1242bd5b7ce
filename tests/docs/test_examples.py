"""The examples run and reach their goals: the numbers they print are checked, not just that
they print something. Each example's ``main`` also returns what it found."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from example_files import load_example

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def printed_number(out, pattern):
    """The float captured by ``pattern`` (a regex with one group) in the printed output."""
    match = re.search(pattern, out)
    assert match, f"{pattern!r} not found in:\n{out}"
    return float(match.group(1))


def printed_array(out, label):
    match = re.search(re.escape(label) + r"\s*:\s*\[([^\]]*)\]", out)
    assert match, f"{label!r} not found in:\n{out}"
    return np.array([float(v) for v in match.group(1).split()])


def png_size(path):
    """(width, height) of a PNG file, read from its header."""
    data = Path(path).read_bytes()
    assert data[:8] == PNG_MAGIC, f"{path} is not a PNG file"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_quickstart_prints_source_a_checked_gradient_and_a_lower_loss(capsys):
    load_example("quickstart").main()
    out = capsys.readouterr().out
    assert "def loss_grad(w, X, y):" in out and "gradcheck: True" in out
    start = printed_number(out, r"loss\s+: ([-\d.e]+)")
    after = printed_number(out, r"after 200 steps of gradient descent, loss = ([-\d.e]+)")
    assert start == pytest.approx(np.log(2.0)) and after < 0.2 * start
    gradient = printed_array(out, "gradient")
    assert gradient.shape == (3,) and np.all(np.isfinite(gradient))


def test_newton_on_rosenbrock_reaches_the_minimum_and_plots_its_path(capsys, tmp_path):
    x, steps, plot = load_example("newton_rosenbrock").main(tmp_path)
    out = capsys.readouterr().out
    np.testing.assert_allclose(x, np.ones_like(x), atol=1e-8)
    assert 10 <= steps <= 40  # Newton from (-1.2, 1): tens of steps, not thousands
    lines = [line for line in out.splitlines() if line.startswith("step ")]
    assert len(lines) == steps
    values = [printed_number(line, r"f = ([-\d.e+]+)") for line in lines]
    assert all(b < a for a, b in zip(values, values[1:])), "each accepted step decreases f"
    assert printed_number(lines[-1], r"\|x - 1\| = ([-\d.e+]+)") < 1e-8
    assert "minimum found at (1.000000000, 1.000000000)" in out
    assert plot == tmp_path / "newton_rosenbrock.png" and png_size(plot) == (585, 495)


def test_cnn_digits_example_reaches_97_percent_in_generated_python(capsys, tmp_path):
    """The CNN example run as generated Python (``--python``: the same numbers as numba, without
    minutes of numba compilation): >= 97% test accuracy, BatchNorm's running statistics advanced
    once per minibatch by fit, and the loss curve saved."""
    pytest.importorskip("sklearn")
    example = load_example("cnn_digits")
    model, history, accuracy, plot = example.main("--python", str(tmp_path))
    out = capsys.readouterr().out
    assert accuracy >= 0.97 and f"test accuracy {accuracy:.4f}" in out and "fit on python" in out
    assert out.count("epoch ") == example.EPOCHS and history[-1] < history[0] / 5
    batches = -(-len(example.load_image_split()[0]) // example.BATCH_SIZE)
    norm = model.features[1]
    assert norm.num_batches_tracked.tolist() == [example.EPOCHS * batches] and not model.training
    if plot is not None:
        assert plot == tmp_path / "cnn_digits.png" and png_size(plot)[0] > 0
    else:
        assert "plot skipped" in out


@pytest.mark.slow
def test_cnn_digits_example_reaches_97_percent_on_numba(capsys, tmp_path):
    """The example as a user runs it: fit on numba (minutes of numba compilation)."""
    pytest.importorskip("sklearn")
    model, history, accuracy, plot = load_example("cnn_digits").main(str(tmp_path))
    out = capsys.readouterr().out
    assert accuracy >= 0.97 and f"test accuracy {accuracy:.4f}" in out
    assert history[-1] < history[0] / 5 and not model.training
    if plot is not None:
        assert png_size(plot)[0] > 0


def test_fitting_a_spring_recovers_its_parameters_and_plots_the_fit(capsys, tmp_path):
    example = load_example("fit_spring")
    k, c, losses, plot = example.main(tmp_path)
    out = capsys.readouterr().out
    # from noisy observations (standard deviation 0.02) the fit lands near the truth
    assert printed_number(out, r"fitted k = ([\d.]+)") == pytest.approx(4.0, abs=0.01)
    assert printed_number(out, r"c = ([\d.]+)") == pytest.approx(0.3, abs=0.01)
    assert abs(k - 4.0) < 0.01 and abs(c - 0.3) < 0.01
    # the loss falls from the initial misfit to the noise floor (variance 4e-4)
    assert losses.shape == (300,) and losses[0] > 0.1
    assert losses[-1] == pytest.approx(4e-4, rel=0.1)
    assert printed_number(out, r"last ([\d.e+-]+) \(noise") == pytest.approx(losses[-1], rel=1e-3)
    assert "for i in range(" in out  # the printed gradient source loops backwards over the steps
    assert plot == tmp_path / "fit_spring.png" and png_size(plot) == (990, 360)


def test_examples_without_matplotlib_say_the_plot_was_skipped(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib raises ImportError
    example = load_example("newton_rosenbrock")
    assert example.save_plot(tmp_path / "path.png", np.array([[0.0, 0.0], [1.0, 1.0]])) is None
    assert "matplotlib is not installed: plot skipped" in capsys.readouterr().out
    assert not (tmp_path / "path.png").exists()
    spring = load_example("fit_spring")
    empty = np.zeros(spring.STEPS)
    assert spring.save_plot(tmp_path / "fit.png", empty, empty, empty, np.ones(3)) is None
    assert "plot skipped" in capsys.readouterr().out


def test_logistic_regression_matches_scikit_learn(capsys):
    pytest.importorskip("sklearn")
    ours, theirs, objective, best = load_example("logistic_regression").main()
    out = capsys.readouterr().out
    assert ours == pytest.approx(theirs, abs=1.0 / 114)  # at most one of 114 test rows differs
    assert ours > 0.95
    assert objective == pytest.approx(best, rel=1e-3)  # the same objective, nearly minimised
    assert printed_number(out, r"adcompile   : test accuracy ([\d.]+)") == pytest.approx(ours, abs=1e-4)
    assert printed_number(out, r"scikit-learn: test accuracy ([\d.]+)") == pytest.approx(theirs, abs=1e-4)
    assert re.search(r"gradient steps in [\d.]+ ms", out) and re.search(r"lbfgs in [\d.]+ ms", out)
    assert "gradcheck: True" in out


def test_custom_function_example(capsys):
    load_example("custom_function").main()
    out = capsys.readouterr().out
    checks = re.findall(r"^(grad\S*check[^:]*):\s*(\S+)$", out, flags=re.MULTILINE)
    assert len(checks) == 5 and all(result == "True" for _, result in checks), checks
    start = printed_number(out, r"compiled loss\s+: ([\d.e-]+)")
    after = printed_number(out, r"loss after 100 gradient steps: ([\d.e-]+)")
    assert after < start
    assert np.all(np.isnan(printed_array(out, "naive log-sum-exp gradient")))
    softmax = printed_array(out, "custom log-sum-exp gradient")
    big = np.array([1000.0, 999.0, 998.5])
    np.testing.assert_allclose(softmax, np.exp(big - big.max()) / np.exp(big - big.max()).sum(), rtol=1e-6)
    assert "# backward of custom Function LinearFunction" in out


def test_jax_style_training_learns_the_spirals_with_a_dict_of_parameters(capsys):
    found = load_example("jax_style_training").main(steps=500)
    out = capsys.readouterr().out
    assert "gradient keys: ['W1', 'W2', 'b1', 'b2']" in out
    assert found["loss"] < 0.5 * found["first_loss"]
    assert found["accuracy"] > 0.9
