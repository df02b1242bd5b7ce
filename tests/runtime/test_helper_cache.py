"""numba's disk cache lives in adcompile's cache folder: generated functions' and runtime helpers'.

A new process compiling a new function with a cache folder that already holds the helpers
compiles no helper again (counted with numba's compile events); the files live under
``<cache>/__pycache__/runtime-<digest>``, not next to the package (which may be read-only);
a generated function's files go to ``<cache>/__pycache__`` even when ``NUMBA_CACHE_DIR`` is set;
a damaged helper file costs a recompilation, never a failed compile (the attacks on these files
are in ``test_cache_security.py``). The test across processes
is slow (the first process compiles every helper it needs: about a minute on 2 busy cores).
"""
import hashlib
import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adcompile
from adcompile.backend import numba_cache
from adcompile.runtime import helper_cache

TIMEOUT = 300

# A gradient that calls helpers (a reduction along an axis, unbroadcast, broadcast_to_shape), and
# counts the helpers numba compiles (a helper loaded from the disk cache fires no compile event).
PROGRAM = textwrap.dedent('''
    import json, sys
    import numpy as np
    from numba.core import event
    import adcompile
    from adcompile.runtime import helper_cache

    def loss(x, b):
        return np.sum(np.max(x * x + b, axis={axis}))

    x = np.arange(12.0).reshape(3, 4) / 7.0
    b = np.array([0.5, -1.0, 2.0, 0.25])
    with event.install_recorder("numba:compile") as recorder:
        gx, gb = adcompile.grad(adcompile.compile(loss, fuse=False), wrt=(0, 1))(x, b)
    compiled = {{ev.data["dispatcher"].py_func.__module__ for _, ev in recorder.buffer if ev.is_start}}
    print(json.dumps({{"gx": gx.tolist(), "gb": gb.tolist(),
                      "helpers_compiled": sorted(m for m in compiled if m.startswith("adcompile.runtime")),
                      "folder": str(helper_cache.helper_cache_folder())}}))
''')


def expected_gradient(axis):
    x = np.arange(12.0).reshape(3, 4) / 7.0
    b = np.array([0.5, -1.0, 2.0, 0.25])
    y = x * x + b
    winners = (y == y.max(axis=axis, keepdims=True)).astype(float)  # no ties in this y
    return 2 * x * winners, winners.sum(axis=0)


def run(program, cache):
    path = cache.parent / f"program_{len(list(cache.parent.glob('program_*')))}.py"  # adcompile reads its source
    path.write_text(program)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT,
                         env={**os.environ, "ADCOMPILE_CACHE_DIR": str(cache)})
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.splitlines()[-1])


def test_the_helpers_cache_goes_to_the_cache_folder_not_next_to_the_package():
    from adcompile.runtime.kernels import broadcasting_numba, special_functions_numba  # lazy: imports numba
    # a kernel of a family module of runtime/kernels/, and one of the special functions' kernels
    for kernel in (broadcasting_numba._aligned_shapes, broadcasting_numba._sum_into, special_functions_numba._digamma):
        folder = Path(kernel._cache.cache_path)
        assert folder.name == f"runtime-{helper_cache.runtime_digest()}" and folder.parent.name == "__pycache__"
        assert helper_cache.RUNTIME_FOLDER not in folder.parents


def test_a_helper_numba_cannot_cache_gets_numbas_warning_not_an_attribute_error():
    """numba checks a compile result before caching it ("uses lifted code", "dynamic globals",
    as at NUMBA_OPT=0) and warns naming the locator's file: the helpers' locator has one."""
    import warnings
    from types import SimpleNamespace
    from numba.core.errors import NumbaWarning
    from adcompile.runtime.kernels import broadcasting_numba  # lazy: imports numba
    impl = broadcasting_numba._sum_into._cache._impl
    assert type(impl.locator).__name__ == "RuntimeHelperLocator"
    uncachable = SimpleNamespace(lifted=[SimpleNamespace(can_cache=False)], fndesc=SimpleNamespace(qualname="_sum_into"),
                                 library=SimpleNamespace(has_dynamic_globals=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert impl.check_cachable(uncachable) is False
    assert any(issubclass(w.category, NumbaWarning) and "Cannot cache" in str(w.message) for w in caught)


def halved_sum(x):
    return np.sum(x) * 0.5


def test_numba_cache_dir_does_not_move_a_generated_functions_cache(tmp_path, monkeypatch):
    import numba  # lazy: numba takes ~0.3 s to import
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "numba"))
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(tmp_path / "cache"))
    assert adcompile.compile(halved_sum, backend="numba", tiered=False)(np.arange(4.0)) == 3.0
    assert list((tmp_path / "cache" / "__pycache__").glob("halved_sum_*.nbi"))
    assert not (tmp_path / "numba").exists()


@pytest.mark.slow
def test_a_new_process_loads_the_helpers_a_previous_one_compiled(tmp_path):
    cache = tmp_path / "cache"
    first = run(PROGRAM.format(axis=1), cache)
    assert first["helpers_compiled"], "the first process compiles the helpers"
    folder = cache / "__pycache__" / f"runtime-{helper_cache.runtime_digest()}"
    assert first["folder"] == str(folder)
    assert any(path.suffix == ".nbi" for path in folder.iterdir())
    # Another function (axis 0), so the generated code is new, but the helpers' signatures are the same.
    second = run(PROGRAM.format(axis=0), cache)
    assert second["helpers_compiled"] == []
    for result, axis in ((first, 1), (second, 0)):
        gx, gb = expected_gradient(axis)
        np.testing.assert_allclose(result["gx"], gx, rtol=1e-12)
        np.testing.assert_allclose(result["gb"], gb, rtol=1e-12)


def test_damaged_helper_files_are_discarded(tmp_path, monkeypatch):
    folder = tmp_path / "__pycache__" / f"runtime-{helper_cache.runtime_digest()}"
    folder.mkdir(parents=True)
    good = folder / "numba_impls._kernel-1.py311.nbi"
    payload = pickle.dumps("0.0") + pickle.dumps(("stamp", {}))
    good.write_bytes(hashlib.sha256(payload).digest() + payload)  # the gated files' format
    truncated = folder / "numba_impls._other-2.py311.nbi"
    truncated.write_bytes(good.read_bytes()[:5])
    garbage = folder / "numba_impls._other-2.py311.1.nbc"
    garbage.write_bytes(b"\x80\x04not a pickle")
    unchecked = folder / "numba_impls._other-3.py311.nbi"
    unchecked.write_bytes(payload)  # numba's own format: no checksum
    monkeypatch.setattr(helper_cache, "_folder_provider", lambda: tmp_path / "__pycache__")
    assert sorted(numba_cache.discard_damaged_helper_files()) == sorted([truncated, garbage, unchecked])
    assert list(folder.iterdir()) == [good]


class FailingOnceDispatcher:
    """Stands for a numba dispatcher whose first compilation meets a damaged helper file."""

    def __init__(self):
        self.py_func, self.attempts = None, 0

    def compile(self, signature):
        self.attempts += 1
        if self.attempts == 1:
            raise EOFError("Ran out of input")
        return f"compiled {signature}"


@pytest.mark.parametrize("damaged", [True, False])
def test_a_compilation_failing_on_a_damaged_helper_file_is_retried_once(monkeypatch, damaged):
    monkeypatch.setattr(numba_cache, "discard_damaged_helper_files", lambda: ["a damaged file"] if damaged else [])
    dispatcher = numba_cache.recompiling_after_damaged_helper_files(FailingOnceDispatcher())
    if damaged:
        assert dispatcher.compile("(float64,)") == "compiled (float64,)"
    else:  # nothing damaged: the error was a real one and is raised
        with pytest.raises(EOFError):
            dispatcher.compile("(float64,)")
