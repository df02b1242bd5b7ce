"""The parts of a split function compiled inside it as numba subroutines
(``adcompile/backend/subroutines.py``): they compute what the Python does, for several argument
types; their errors reach the caller; LLVM finishes only the calling function's library (no part
is optimised and code-generated on its own, then again in the caller); the function's disk-cache
entry alone serves the next process; and each part's functions are optimised at its own level."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from numba.core import codegen, config
from numba.core.dispatcher import Dispatcher

from adcompile.backend import loader
from adcompile.backend.optimisation_level import MANY_LOOPS

# the shape of codegen/function_parts.py's output: parts returning what later code reads
SOURCE = '''import numpy as np


def f_part_0(x, n):
    s = x[0] * 0.0
    for i in range(min(n, x.shape[0])):
        s += x[i] * x[i]
    y = x * 2.0
    return s, y


def f_part_1(n, s, y):
    if n > y.shape[0]:
        raise ValueError("n is larger than x")
    return s + np.sum(y[:n]) + y[n]


def f(x, n):
    s, y = f_part_0(x, n)
    return f_part_1(n, s, y)
'''


def python_f(x, n, source=SOURCE):
    namespace = {}
    exec(compile(source, "<generated>", "exec"), namespace)  # noqa: S102  (the test's own text)
    return namespace["f"](x, n)


def load_f(source=SOURCE):
    loader.forget_loaded()
    return loader.load(source, "f", "numba")


def test_parts_are_subroutines_that_compute_what_python_does(cache):
    f = load_f()
    assert not isinstance(f.py_func.__globals__["f_part_0"], Dispatcher)
    for dtype in (np.float64, np.float32):  # the parts compile for each signature of f
        x = np.linspace(-1.0, 1.0, 5).astype(dtype)
        for n in (0, 2, 4):
            assert f(x, n) == pytest.approx(python_f(x, n), rel=1e-6)


def test_errors_raised_in_a_part_reach_the_caller(cache):
    f = load_f()
    x = np.linspace(-1.0, 1.0, 5)
    with pytest.raises(IndexError):  # a bounds check in a part (y[n] with n == len(x))
        f(x, 5)
    with pytest.raises(ValueError, match="n is larger than x"):
        f(x, 6)


def test_only_the_calling_function_is_finished_by_llvm(cache, monkeypatch):
    finished = []
    real = codegen.CPUCodeLibrary.finalize

    def recording(library):
        finished.append(library.name)
        return real(library)

    monkeypatch.setattr(codegen.CPUCodeLibrary, "finalize", recording)
    source = SOURCE.replace("x * 2.0", "x * 3.0")  # a module of this test's own: compiled here
    f = load_f(source)
    x = np.linspace(-1.0, 1.0, 5)
    assert f(x, 3) == pytest.approx(python_f(x, 3, source))
    assert "f" in finished and not any("f_part_" in name for name in finished), finished


SCRIPT = textwrap.dedent('''
    import sys
    import numpy as np
    from adcompile.backend import loader

    f = loader.load(open(sys.argv[1]).read(), "f", "numba")
    print(f(np.linspace(-1.0, 1.0, 5), 3))
    print("hits", sum(f.stats.cache_hits.values()))
''')


def test_the_next_process_loads_the_function_with_its_parts_from_the_disk_cache(tmp_path):
    (tmp_path / "source.py").write_text(SOURCE)
    (tmp_path / "script.py").write_text(SCRIPT)
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ADCOMPILE_DISABLE_CACHE", None)
    runs = [subprocess.run([sys.executable, str(tmp_path / "script.py"), str(tmp_path / "source.py")], env=env,
                           capture_output=True, text=True, timeout=300, check=True).stdout.splitlines()
            for _ in range(2)]
    assert float(runs[0][0]) == float(runs[1][0]) == pytest.approx(python_f(np.linspace(-1.0, 1.0, 5), 3))
    assert runs[0][1] == "hits 0" and runs[1][1] == "hits 1"


def source_with_parts(loops_in_part):
    lines = ["def f_part_0(x):", "    s = 0.0"]
    for k in range(loops_in_part):
        lines += [f"    for i{k} in range(x.shape[0]):", f"        s += x[i{k}] * {k + 1}"]
    lines += ["    return s", "", "", "def f(x):", "    s = f_part_0(x)", "    return s", ""]
    return "\n".join(lines)


def test_a_part_is_optimised_at_its_own_level_and_the_function_at_its_own(cache, monkeypatch):
    """As when the parts were dispatchers linked into the function: the part's functions at the
    level of its loops (-O2 for many), the module with the function and its parts at numba's
    default (the function has no loop of its own)."""
    levels = []
    real = codegen.CPUCodeLibrary._optimize_functions

    def recording(library, module):
        levels.append((library.name, int(config.OPT)))
        return real(library, module)

    monkeypatch.setattr(codegen.CPUCodeLibrary, "_optimize_functions", recording)
    f = load_f(source_with_parts(MANY_LOOPS + 1))
    x = np.linspace(0.0, 1.0, 7)
    assert f(x) == pytest.approx(sum((k + 1) * x.sum() for k in range(MANY_LOOPS + 1)), rel=1e-12)
    default = int(config.OPT)
    assert ("f_part_0", min(2, default)) in levels and ("f", default) in levels, levels
    assert int(config.OPT) == default
