"""Machine code that processes cached separately, met in one process, keeps its own bodies.

numba names a compiled function by qualified name, argument types and an id it counted from 1
in each process; the runtime's reductions along an axis are closures of one ``impl`` (one per
reduction, same argument types). A process that first compiled ``np.max`` along an axis and
another that first compiled ``np.sum`` along an axis gave both the same name; a third process
whose program calls both loaded both from the cache and LLVM kept one body: the maximum was
summed (``runtime/function_ids.py`` draws the ids at random). Each program runs in a fresh
process (numba's in-process state would hide the cache), bounded by a timeout.
"""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from adcompile.backend.numba_cache import CheckedFunctionCache
from adcompile.runtime.function_ids import CACHE_FORMAT
from adcompile.runtime.helper_cache import runtime_digest

TIMEOUT = 300
X = np.arange(12.0).reshape(3, 4) * 0.25 + 0.5

PROGRAM = textwrap.dedent('''
    import json, sys
    import numpy as np
    import adcompile

    def value(x):
        return {expression}

    x = np.arange(12.0).reshape(3, 4) * 0.25 + 0.5
    f = adcompile.compile(value, backend="numba", tiered=False)
    print(json.dumps({{"value": float(f(x)), "gradient": adcompile.grad(f)(x).tolist()}}))
''')


def run_in_fresh_process(folder, name, expression, cache):
    path = folder / f"{name}.py"
    path.write_text(PROGRAM.format(expression=expression))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT,
                         env={**os.environ, "ADCOMPILE_CACHE_DIR": str(cache), "ADCOMPILE_FINISH_COMPILES": "0"})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_helpers_cached_by_different_processes_keep_their_bodies_when_called_together(tmp_path):
    cache = tmp_path / "cache"
    first = run_in_fresh_process(tmp_path, "maximum", "np.sum(np.max(x, axis=0))", cache)
    second = run_in_fresh_process(tmp_path, "total", "np.sum(np.sum(x, axis=0))", cache)
    assert first["value"] == np.sum(np.max(X, axis=0)) and second["value"] == np.sum(X)
    both = run_in_fresh_process(tmp_path, "both", "np.sum(np.max(x, axis=0)) + 10.0 * np.sum(np.sum(x, axis=1))", cache)
    assert both["value"] == pytest.approx(np.sum(np.max(X, axis=0)) + 10.0 * np.sum(X), rel=1e-14)
    expected = 10.0 + (X == np.max(X, axis=0))  # no ties: each column's maximum is one element
    np.testing.assert_allclose(both["gradient"], expected, rtol=1e-14)


def test_the_key_of_a_generated_function_names_the_helpers_and_the_cache_format(tmp_path):
    """Code compiled against other helpers, or with counted ids, is another key: never loaded."""
    import numba
    module = tmp_path / "module.py"
    module.write_text("def f(x):\n    return x + 1.0\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import module as generated
        key = CheckedFunctionCache(generated.f)._index_key(
            (numba.float64,), numba.core.registry.cpu_target.target_context.codegen())
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("module", None)
    assert key[-1] == (CACHE_FORMAT, runtime_digest())
