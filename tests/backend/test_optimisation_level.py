"""The optimisation level of generated functions: numba's default, -O2 for many loops
(``backend/optimisation_level.py``), set only during the function's own compilation."""
import numpy as np
import pytest
from numba.core import config

from adcompile.backend import optimisation_level
from adcompile.backend.optimisation_level import MANY_LOOPS, compiling_at, level_for, loop_count


def source_with_loops(count, name="f"):
    lines = [f"def {name}(x):", "    s = 0.0"]
    for k in range(count):
        lines += [f"    for i{k} in range(x.shape[0]):", f"        s += x[i{k}] * {k + 1}"]
    return "\n".join(lines + ["    return s", ""])


def test_loops_are_counted_in_the_named_function_only():
    source = source_with_loops(3) + "\n" + source_with_loops(5, "g")
    assert loop_count(source, "f") == 3 and loop_count(source, "g") == 5
    assert loop_count("def f(x):\n    while x > 0:\n        x -= 1\n    return x\n", "f") == 1


def test_many_loops_compile_at_o2_and_few_at_numba_default():
    assert level_for(source_with_loops(MANY_LOOPS), "f") is None
    assert level_for(source_with_loops(MANY_LOOPS + 1), "f") == 2


class _Recording:
    """A stand-in for a numba dispatcher: records ``config.OPT`` while it compiles."""
    py_func = None

    def __init__(self):
        self.levels = []

    def compile(self, signature):
        self.levels.append(int(config.OPT))
        return signature


def test_the_level_holds_during_the_compilation_only(monkeypatch):
    default = config.OPT
    recording = _Recording()
    dispatcher = compiling_at(recording, 2)
    assert dispatcher.compile("sig") == "sig"
    assert recording.levels == [min(2, int(default))] and config.OPT is default
    monkeypatch.setattr(config, "OPT", type(default)(1))  # the user's NUMBA_OPT=1 is kept
    dispatcher.compile("sig")
    assert recording.levels[-1] == 1


def test_a_function_with_many_loops_runs_right_on_numba(monkeypatch):
    """Through the loader: the level applies, and the machine code computes what Python does."""
    from adcompile.backend.loader import load
    seen = []
    real = optimisation_level.compiling_at

    def spying(dispatcher, level):
        seen.append(level)
        return real(dispatcher, level)

    monkeypatch.setattr("adcompile.backend.loader.compiling_at", spying)
    source = source_with_loops(MANY_LOOPS + 1, "many_loops")
    fn = load(source, "many_loops", "numba")
    x = np.linspace(0.0, 1.0, 7)
    assert seen == [2]
    assert fn(x) == pytest.approx(sum((k + 1) * x.sum() for k in range(MANY_LOOPS + 1)), rel=1e-12)
