"""The generated source is a pure function of the program and its argument types: the same
bytes in every process, whatever ``PYTHONHASHSEED`` and the memory addresses are, so that
the generated module's file name (a digest of the source) and numba's disk cache match across
runs and a second run of a training script compiles nothing.

Each check runs ``tests/journeys/`` scripts in fresh processes, each with its own cache
folder, and compares the generated files. (Set or id-keyed dict iteration order changes with
``PYTHONHASHSEED`` for names, and with the allocator for objects hashed by identity, such as
the IR's variables.)
"""
import difflib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

JOURNEYS = Path(__file__).resolve().parents[1] / "journeys"
CHECKOUT = Path(__file__).resolve().parents[2]  # the adcompile these tests test, first on the path
SEEDS = (0, 1, 12345)
EXPECTED = ("logistic_loss_grad_", "running_sum_of_squares_grad_", "huber_grad_", "softmax_cross_entropy_grad_",
            "fused_grad_", "shifted_stencil_value_and_grad_", "cubic_energy_hessian_", "custom_grad_",
            "loss_fn_grad_", "squared_error_value_and_grad_", "fit_epoch_", "train_step_",
            "loss_fn_value_and_grad_", "adam_step_", "check_Scaled_apply_", "Scaled_apply_vjp_forward_")


def _environment(cache, seed, **settings):
    env = {k: v for k, v in os.environ.items() if k not in ("ADCOMPILE_FUSE", "ADCOMPILE_REUSE", "NUMBA_DISABLE_JIT")}
    # tiers off: a numba function's own module is written at its load, not when a thread starts
    env.update(PYTHONHASHSEED=str(seed), ADCOMPILE_CACHE_DIR=str(cache), ADCOMPILE_TIERED="0", **settings)
    env["PYTHONPATH"] = os.pathsep.join([str(CHECKOUT)] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    return env


def _run(script, env, *args):
    result = subprocess.run([sys.executable, str(JOURNEYS / script), *args], env=env, capture_output=True,
                            text=True, timeout=900)
    assert result.returncode == 0, f"{script} {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _generated_modules(cache):
    """{file name: bytes} of the generated modules in cache folder ``cache``."""
    return {path.name: path.read_bytes() for path in sorted(cache.glob("*.py"))}


def _first_difference(modules, other):
    """A readable account of how two folders' generated modules differ."""
    def by_function(files):
        return {name.rsplit("_", 1)[0]: (name, text) for name, text in files.items()}
    mine, theirs = by_function(modules), by_function(other)
    lines = [f"only in the first: {sorted(set(modules) - set(other))}",
             f"only in the second: {sorted(set(other) - set(modules))}"]
    for function in sorted(set(mine) & set(theirs)):
        (name_a, a), (name_b, b) = mine[function], theirs[function]
        if a != b:
            lines += difflib.unified_diff(a.decode().splitlines(), b.decode().splitlines(), name_a, name_b,
                                          lineterm="")
            break
    return "\n".join(lines[:80])


def _sources_under_seeds(tmp_path, backend, programs=(), share_helpers=False, **settings):
    """The cache folders of runs under each of ``SEEDS``; ``share_helpers``: the later ones start
    with the first's numba cache of adcompile's runtime helpers (compiled once, not per run)."""
    folders = []
    for seed in SEEDS:
        cache = tmp_path / f"{backend}-{seed}"
        if share_helpers and folders:
            for helpers in (folders[0] / "__pycache__").glob("runtime-*"):
                shutil.copytree(helpers, cache / "__pycache__" / helpers.name)
        _run("codegen_programs.py", _environment(cache, seed, **settings), backend, *programs)
        folders.append(cache)
    return folders


def _assert_same_files(folders):
    first = _generated_modules(folders[0])
    assert first, f"nothing was generated in {folders[0]}"
    for folder in folders[1:]:
        other = _generated_modules(folder)
        assert other == first, f"{folders[0].name} and {folder.name} differ:\n{_first_difference(first, other)}"
    return first


def test_numba_backend_generates_the_same_files_in_every_process(tmp_path):
    """Every program of the set on the numba backend (fused loops, buffer reuse), its files
    written as numba would compile them (``NUMBA_DISABLE_JIT=1`` runs them as Python instead)."""
    modules = _assert_same_files(_sources_under_seeds(tmp_path, "numba", NUMBA_DISABLE_JIT="1"))
    for prefix in EXPECTED:
        assert any(name.startswith(prefix) for name in modules), (prefix, sorted(modules))
    assert any("for i in range(" in text.decode() for text in modules.values())  # fused loops were written


def test_fused_python_backend_generates_the_same_files_in_every_process(tmp_path):
    """The Python backend with the lowering on (``ADCOMPILE_FUSE=all``)."""
    modules = _assert_same_files(_sources_under_seeds(tmp_path, "python", ADCOMPILE_FUSE="all"))
    assert {name.rsplit("_", 1)[0] + "_" for name in modules} >= set(EXPECTED)


def test_numba_compiles_the_same_files_in_every_process(tmp_path):
    """A program with fused loops through numba itself: the same generated module and the same
    numba cache file names (the contents of those hold compile times)."""
    folders = _sources_under_seeds(tmp_path, "numba", ("fused",), share_helpers=True)
    modules = _assert_same_files(folders)
    assert [name.rsplit("_", 1)[0] for name in modules] == ["fused_grad"]
    stem = Path(next(iter(modules))).stem
    names = [sorted(p.name for p in (folder / "__pycache__").glob(stem + ".*")) for folder in folders]
    assert any(name.endswith(".nbi") for name in names[0]) and all(other == names[0] for other in names[1:]), names


def _all_files(folder):
    return {str(path.relative_to(folder)): path.stat().st_mtime_ns for path in folder.rglob("*") if path.is_file()}


def test_a_second_training_run_loads_everything_from_the_disk_cache(tmp_path):
    """``fit`` and a gradient in a script run twice (other PYTHONHASHSEEDs, one cache folder):
    the second process generates the same files, finds each function in numba's disk cache and
    writes nothing."""
    cache = tmp_path / "cache"
    first = json.loads(_run("train_small_mlp.py", _environment(cache, 1)).splitlines()[-1])
    files = _all_files(cache)
    assert first["misses"] >= 2 and first["hits"] == 0, first  # it compiled fit_epoch and the gradient
    second = json.loads(_run("train_small_mlp.py", _environment(cache, 2)).splitlines()[-1])
    assert second["misses"] == 0 and second["hits"] == first["misses"], second
    assert _all_files(cache) == files  # no new or rewritten file: generated modules, numba's index and data
    assert second["history"] == first["history"] and second["gradient"] == first["gradient"]
