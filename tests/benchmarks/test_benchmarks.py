"""The benchmark suite keeps working: ``benchmarks/run.py`` at tiny size, every workload.

Benchmarks are not timed tests: nothing here asserts on a time. The driver runs in a
subprocess (its single-thread settings must be made before numpy loads) with adcompile's
``python`` backend, so CI does not spend minutes in numba compiling the adcompile code of eight
workloads (the hand-written numba code is still compiled and checked); JAX, PyTorch and autograd
are used where installed and skipped otherwise. The fresh-process first-call measurement, off at
tiny size, is exercised separately on the cheapest workload.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import first_call  # noqa: E402
import harness  # noqa: E402
import peers  # noqa: E402
import workloads  # noqa: E402


def test_tiny_suite_runs_every_workload_and_writes_the_table(tmp_path):
    out = tmp_path / "results.md"
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join([str(BENCHMARKS.parent), os.environ.get("PYTHONPATH", "")]))
    completed = subprocess.run([sys.executable, str(BENCHMARKS / "run.py"), "--size", "tiny",
                                "--adcompile-backend", "python", "--out", str(out)],
                               env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-4000:]
    for name in workloads.NAMES:
        assert f"{name}: " in completed.stdout and "implementations agree" in completed.stdout
    table = out.read_text()
    assert "| workload | implementation | forward ms | gradient ms |" in table
    for name in workloads.NAMES:
        assert f"| {workloads.load(name).TITLE} | adcompile" in table
    assert table in completed.stdout  # printed as written


def test_gradient_ratio_prints_a_ratio_per_workload(tmp_path):
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"), BENCH_ADCOMPILE_BACKEND="python",
               PYTHONPATH=os.pathsep.join([str(BENCHMARKS.parent), os.environ.get("PYTHONPATH", "")]))
    completed = subprocess.run([sys.executable, str(BENCHMARKS / "gradient_ratio.py"), "--size", "tiny",
                                "--rounds", "2", "kmeans", "determinant"],
                               env=env, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stderr[-4000:]
    rows = [line.split() for line in completed.stdout.splitlines()[1:]]
    assert [row[0] for row in rows] == ["kmeans", "determinant"]
    for _, forward, gradient, ratio in rows:
        assert float(forward) > 0 and float(gradient) > 0 and float(ratio) > 0


def test_implementations_that_disagree_stop_the_run():
    with pytest.raises(harness.DisagreementError, match="numpy by hand disagrees"):
        harness.check_agreement(np.ones(3), np.array([1.0, 1.0, 1.1]), "numpy by hand", "toy")
    with pytest.raises(harness.DisagreementError):
        harness.check_agreement(np.ones(3), np.ones(4), "numpy by hand", "toy")
    harness.check_agreement(np.ones(3), np.ones(3) + 1e-12, "numpy by hand", "toy")


def test_first_call_in_fresh_processes(monkeypatch):
    """The fresh-process path the full-size run uses, on the tiny Rosenbrock: adcompile with a
    cold then warm cache (python backend, so nothing compiles for long) and numpy."""
    monkeypatch.setenv(harness.BACKEND_VARIABLE, "python")
    cold, warm = first_call.cold_and_warm_seconds("rosenbrock", "adcompile", "tiny")
    assert cold > 0 and warm > 0
    assert first_call.first_call_seconds("rosenbrock", "numpy", "tiny") > 0
    assert first_call.import_seconds() > 0


def test_a_missing_peer_is_skipped_with_a_message(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "autograd", None)  # makes `import autograd` fail
    found = peers.discover(("autograd",))
    assert found.autograd is None and "autograd" not in found.versions
    assert "skipping autograd: not installed" in capsys.readouterr().out
