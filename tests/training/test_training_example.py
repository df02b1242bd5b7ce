"""examples/train_digits.py: fit reaches >= 95% test accuracy on the digits and saves its
loss curve; the PyTorch-style loop (run here as generated Python, to spare a second numba
compilation) gives the same parameters and history."""
from pathlib import Path

import numpy as np
import pytest

from example_files import load_example

pytest.importorskip("sklearn")


def test_digits_mlp_trained_by_fit_and_by_the_loop(tmp_path, capsys):
    example = load_example("train_digits")
    model, history, accuracy, plot = example.main(str(tmp_path))
    out = capsys.readouterr().out
    assert accuracy >= 0.95 and f"test accuracy {accuracy:.4f}" in out
    assert out.count("epoch ") == example.EPOCHS and history[-1] < history[0] / 5
    if plot is not None:
        assert Path(plot).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "plot skipped" in out
    example.BACKEND = "python"
    looped, loop_history, loop_accuracy, _ = example.main(str(tmp_path), "--loop")
    np.testing.assert_allclose(loop_history, history, rtol=1e-9)
    for (name, p), (_, q) in zip(model.named_parameters(), looped.named_parameters()):
        np.testing.assert_allclose(p.data, q.data, rtol=1e-8, atol=1e-12, err_msg=name)
    assert loop_accuracy == accuracy
