"""The backend: generated files in the cache folder, numba's disk cache across processes,
lazy numba import, one specialisation per argument signature."""
import os
import subprocess
import sys
import textwrap

import numpy as np

import adcompile

SCRIPT = textwrap.dedent('''
    import numpy as np
    import adcompile

    @adcompile.compile
    def f(x):
        return np.sum(np.sin(x) * x)

    g = adcompile.grad(f)
    print(g(np.arange(3.0)).tolist())
    spec = g._specs[g._last_signature][2]
    print("hits", sum(spec.stats.cache_hits.values()), "misses", sum(spec.stats.cache_misses.values()))
''')


def run_script(tmp_path, cache):
    script = tmp_path / "user_program.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_second_process_loads_compiled_code_from_the_disk_cache(tmp_path):
    cache = tmp_path / "cache"
    first = run_script(tmp_path, cache)
    second = run_script(tmp_path, cache)
    assert first[0] == second[0]
    assert first[1].startswith("hits 0")
    assert second[1].startswith("hits 1")
    generated = [p.name for p in cache.glob("*.py")]
    assert any(name.startswith("f_grad_") for name in generated)


def test_import_adcompile_does_not_import_numba():
    code = "import sys, adcompile; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_generated_source_lives_in_a_real_file_that_tracebacks_point_into():
    @adcompile.compile(backend="python")
    def divide(x, y):
        return np.sum(x / y)
    g = adcompile.grad(divide)
    g(np.ones(2), np.ones(2))
    fn = g._specs[g._last_signature][2]
    path = fn.py_func.__code__.co_filename  # (loaded functions name the generated one, as numba does)
    assert path.endswith(".py") and os.path.exists(path)
    with open(path) as handle:
        assert handle.read() == adcompile.source(g, stage="lowered")


def test_one_specialisation_per_signature():
    @adcompile.compile(backend="python")
    def h(x):
        return np.sum(x * x)
    g = adcompile.grad(h)
    g(np.ones(3))
    g(np.ones(5))                      # same signature: float64, 1-d
    g(np.ones((2, 2)))                 # 2-d
    g(np.ones(3, dtype=np.float32))    # float32
    g(2.0)                             # scalar
    assert len(g._specs) == 4
    assert g(np.ones(3, dtype=np.float32)).dtype == np.float32
