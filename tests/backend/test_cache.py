"""The compile cache never serves the wrong code.

Across processes: editing a helper module (a plain helper or a custom Function's backward) gives
new code, damaged numba cache files and damaged generated files are rebuilt, concurrent
processes share one fresh cache folder. In process: what the cache key covers, the trust rules
for folders and files, clear_cache, ADCOMPILE_DISABLE_CACHE, and first calls from many threads.
Every subprocess is bounded by a timeout.
"""
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import adcompile
from adcompile.api import compiled, specialised
from adcompile.backend import cache_folder, cache_key, loader

TIMEOUT = 300
X = [1.0, 2.0, 3.0]

USER_MODULE = textwrap.dedent('''
    import numpy as np
    import helper_mod

    def loss(x):
        return np.sum(helper_mod.{call}(x))
''')

PLAIN_HELPER = textwrap.dedent('''
    def h(x):
        return x ** 2
''')
CUSTOM_FUNCTION_HELPER = textwrap.dedent('''
    import adcompile

    class Cube(adcompile.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * 3.0 * x ** 2
''')
# kind: (helper module, the helper module edited, the call in user_mod, gradient before, after)
HELPERS = {
    "plain": (PLAIN_HELPER, PLAIN_HELPER.replace("x ** 2", "x ** 3 + x"), "h",
              [2.0, 4.0, 6.0], [4.0, 13.0, 28.0]),
    # The edit changes only the custom rule, not the forward: the derivative must follow it.
    "custom Function backward": (CUSTOM_FUNCTION_HELPER, CUSTOM_FUNCTION_HELPER.replace("3.0 * x", "6.0 * x"),
                                 "Cube.apply", [3.0, 12.0, 27.0], [6.0, 24.0, 54.0]),
}

MAIN = textwrap.dedent('''
    import json, sys, time
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import adcompile
    import user_mod

    g = adcompile.grad(user_mod.loss)
    if len(sys.argv) > 2:                      # wait for the others: compile at the same time
        open(sys.argv[2] + ".ready", "w").close()
        deadline = time.monotonic() + 120
        while not __import__("os").path.exists(sys.argv[2] + ".go") and time.monotonic() < deadline:
            time.sleep(0.01)
    value = g(np.array({x}))
    compiled = g._specs[g._last_signature][2]
    stats = compiled.stats
    print(json.dumps({{"grad": value.tolist(), "hits": sum(stats.cache_hits.values()),
                      "misses": sum(stats.cache_misses.values()),
                      "file": compiled.py_func.__code__.co_filename}}))
'''.format(x=X))


def write_program(folder, helper_text, call="h"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "user_mod.py").write_text(USER_MODULE.format(call=call))
    (folder / "helper_mod.py").write_text(helper_text)
    (folder / "main.py").write_text(MAIN)


def child_env(cache):
    # No .pyc files: the test edits helper_mod.py within the same second, keeping its size.
    return dict(os.environ, ADCOMPILE_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")


def run_program(folder, cache, **env):
    out = subprocess.run([sys.executable, str(folder / "main.py"), str(folder)],
                         env={**child_env(cache), **env},
                         capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def run_again(folder, cache, first):
    """Run the program again; it must use the same generated file as ``first`` (else adcompile's
    runtime or backend code was edited while the test ran, and the test proves nothing)."""
    result = run_program(folder, cache)
    assert result.pop("file") == first["file"], "adcompile's own code changed during the test"
    return result


def generated_files(cache):
    return sorted(cache.glob("loss_grad_*.py"))


@pytest.mark.parametrize("kind", list(HELPERS))
def test_editing_a_helper_module_gives_new_code_in_the_next_process(tmp_path, kind):
    before, after, call, expected_before, expected_after = HELPERS[kind]
    cache = tmp_path / "cache"
    write_program(tmp_path / "program", before, call)
    first = run_program(tmp_path / "program", cache)
    assert first["grad"] == expected_before and first["misses"] == 1

    (tmp_path / "program" / "helper_mod.py").write_text(after)
    second = run_program(tmp_path / "program", cache)
    assert second["grad"] == expected_after
    assert second["misses"] == 1  # compiled afresh, not served from the first program's cache
    assert len(generated_files(cache)) == 2


def flip_middle_byte(path):
    content = bytearray(path.read_bytes())
    content[len(content) // 2] ^= 0xFF
    path.write_bytes(bytes(content))


def test_damaged_numba_cache_files_are_rebuilt_not_loaded(tmp_path):
    cache = tmp_path / "cache"
    write_program(tmp_path / "program", HELPERS["plain"][0])
    expected = HELPERS["plain"][3]
    first = run_program(tmp_path / "program", cache)
    assert first["misses"] == 1
    numba_files = cache / "__pycache__"
    index = next(numba_files.glob("loss_grad_*.nbi"))
    data = next(numba_files.glob("loss_grad_*.nbc"))

    damages = {
        "truncated index": lambda: index.write_bytes(index.read_bytes()[:40]),
        "garbage data file": lambda: data.write_bytes(os.urandom(500)),
        "one flipped byte in the machine code": lambda: flip_middle_byte(data),
    }
    for what, damage in damages.items():
        damage()
        result = run_again(tmp_path / "program", cache, first)
        assert result == {"grad": expected, "hits": 0, "misses": 1}, what
    assert run_again(tmp_path / "program", cache, first)["hits"] == 1  # the rewritten cache is good


def test_a_truncated_or_altered_generated_file_is_rewritten_not_imported(tmp_path):
    cache = tmp_path / "cache"
    write_program(tmp_path / "program", HELPERS["plain"][0])
    expected = HELPERS["plain"][3]
    first = run_program(tmp_path / "program", cache)
    path, = generated_files(cache)
    good = path.read_text()

    path.write_text(good[:len(good) // 2])
    assert run_again(tmp_path / "program", cache, first)["grad"] == expected
    assert path.read_text() == good

    # Still valid Python, with the same function name, but computing something else.
    path.write_text(good + "\n\ndef loss_grad(x):\n    return np.zeros_like(x)\n")
    result = run_again(tmp_path / "program", cache, first)
    assert result["grad"] == expected and result["misses"] == 1
    assert path.read_text() == good


def test_concurrent_processes_compiling_into_one_fresh_cache_all_get_the_right_result(tmp_path):
    cache = tmp_path / "cache"
    program = tmp_path / "program"
    write_program(program, HELPERS["plain"][0])
    barrier = tmp_path / "start"
    children = [subprocess.Popen([sys.executable, str(program / "main.py"), str(program), f"{barrier}{k}"],
                                 env=child_env(cache), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
                for k in range(4)]
    try:
        deadline = time.monotonic() + TIMEOUT
        while not all(os.path.exists(f"{barrier}{k}.ready") for k in range(4)):
            assert time.monotonic() < deadline and all(c.poll() is None for c in children)
            time.sleep(0.05)
        for k in range(4):
            open(f"{barrier}{k}.go", "w").close()
        outputs = [c.communicate(timeout=TIMEOUT) for c in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
    for child, (stdout, stderr) in zip(children, outputs):
        assert child.returncode == 0, stderr
        assert json.loads(stdout.splitlines()[-1])["grad"] == HELPERS["plain"][3]
    assert len(generated_files(cache)) == 1
    leftovers = [p.name for p in [*cache.iterdir(), *(cache / "__pycache__").iterdir()] if ".tmp" in p.name]
    assert leftovers == []
    assert run_program(program, cache)["hits"] == 1


def test_disabling_the_disk_cache(tmp_path):
    cache = tmp_path / "cache"
    write_program(tmp_path / "program", HELPERS["plain"][0])
    for _ in range(2):
        result = run_program(tmp_path / "program", cache, ADCOMPILE_DISABLE_CACHE="1")
        assert not result.pop("file").startswith(str(cache))
        assert result == {"grad": HELPERS["plain"][3], "hits": 0, "misses": 1}  # compiled both times
    assert not cache.exists() or list(cache.iterdir()) == []


# ------------------------------------------------------------------ in process


SOURCE = "import numpy as np\n\n\ndef f(x):\n    return 2.0 * x\n"


def test_the_key_covers_backend_and_versions(monkeypatch):
    import numba
    name, _ = cache_key.module_file_name(SOURCE, "f", "numba")
    assert name.startswith("f_") and name.endswith(".py")
    assert cache_key.module_file_name(SOURCE + "\n", "f", "numba")[0] != name
    assert cache_key.module_file_name(SOURCE, "f", "python")[0] != name
    monkeypatch.setattr(adcompile.version, "__version__", "999.0")
    assert cache_key.module_file_name(SOURCE, "f", "numba")[0] != name
    monkeypatch.undo()
    monkeypatch.setattr(numba, "__version__", "0.0.1")
    assert cache_key.module_file_name(SOURCE, "f", "numba")[0] != name
    monkeypatch.undo()
    monkeypatch.setattr(np, "__version__", "0.0.1")
    assert cache_key.module_file_name(SOURCE, "f", "numba")[0] != name
    monkeypatch.undo()
    assert cache_key.module_file_name(SOURCE, "f", "numba")[0] == name


def load_f(backend="python"):
    loader.forget_loaded()
    return loader.load(SOURCE, "f", backend)


def test_a_new_cache_folder_is_private(cache):
    f = load_f()
    assert f(1.5) == 3.0
    assert cache.stat().st_mode & 0o777 == 0o700
    assert os.path.dirname(f.py_func.__code__.co_filename) == str(cache)


def assert_falls_back(cache, reason):
    with pytest.warns(UserWarning, match=reason):
        f = load_f()
    assert f(1.5) == 3.0
    folder = os.path.dirname(f.py_func.__code__.co_filename)
    assert folder != str(cache)
    assert os.stat(folder).st_uid == os.getuid() and os.stat(folder).st_mode & 0o777 == 0o700
    assert not list(cache.glob("*.py"))


def test_a_folder_writable_by_others_is_not_used(cache):
    cache.mkdir(mode=0o700)
    cache.chmod(0o777)
    assert_falls_back(cache, "writable by other users")


def test_a_numba_subfolder_writable_by_others_is_not_used(cache):
    (cache / "__pycache__").mkdir(parents=True)
    (cache / "__pycache__").chmod(0o757)
    assert_falls_back(cache, "writable by other users")


def test_a_folder_in_a_parent_writable_by_others_is_not_used(cache):
    cache.parent.chmod(0o777)  # no sticky bit: another user could swap the folder
    assert_falls_back(cache, "above it is writable by other users and not sticky")


needs_root = pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                                reason="changing a file's owner needs root")
OTHER_USER = 12345


@needs_root
def test_a_folder_owned_by_another_user_is_not_used(cache):
    cache.mkdir(mode=0o700)
    os.chown(cache, OTHER_USER, OTHER_USER)
    assert_falls_back(cache, "owned by user id 12345")


@needs_root
def test_a_generated_file_owned_by_another_user_is_replaced(cache):
    path = load_f().py_func.__code__.co_filename
    os.chown(path, OTHER_USER, OTHER_USER)
    f = load_f()
    assert f(1.5) == 3.0 and os.stat(path).st_uid == os.getuid()


def test_a_generated_file_writable_by_others_is_replaced(cache):
    path = load_f().py_func.__code__.co_filename
    os.chmod(path, 0o666)
    with open(path, "a") as handle:
        handle.write("f = None\n")  # what another user could have planted
    f = load_f()
    assert f(1.5) == 3.0
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert open(path).read() == SOURCE


@needs_root
def test_numba_cache_files_owned_by_another_user_are_removed(cache):
    path = load_f("numba").py_func.__code__.co_filename
    stem = os.path.basename(path)[:-3]
    planted = cache / "__pycache__" / f"{stem}.f-4.py311.nbi"
    own = cache / "__pycache__" / f"{stem}.f-4.py311.1.nbc"
    planted.write_bytes(b"a pickle from someone else")
    own.write_bytes(b"ours")
    os.chown(planted, OTHER_USER, OTHER_USER)
    load_f("numba")
    assert not planted.exists() and own.exists()


def test_clear_cache_removes_generated_and_numba_files_only(cache):
    path = load_f().py_func.__code__.co_filename
    (cache / "__pycache__").mkdir()
    (cache / "__pycache__" / "f_0123456789abcdef.f-4.py311.nbi").write_bytes(b"")
    (cache / "notes.txt").write_text("not ours")
    assert adcompile.clear_cache() == 2
    assert sorted(p.name for p in cache.iterdir()) == ["notes.txt"]
    assert load_f()(1.5) == 3.0 and os.path.exists(path)  # written again on the next load


def test_disabled_cache_writes_to_a_private_temporary_folder(cache, monkeypatch):
    monkeypatch.setenv("ADCOMPILE_DISABLE_CACHE", "1")
    f = load_f()
    assert f(1.5) == 3.0
    folder = os.path.dirname(f.py_func.__code__.co_filename)
    assert folder != str(cache) and os.stat(folder).st_mode & 0o777 == 0o700
    assert cache_folder.cache_location() == (cache_folder.Path(folder), False)


def test_first_calls_from_eight_threads_compile_once(cache, monkeypatch):
    counts = {"translate": 0, "load": 0}

    def counting(name, original):
        def wrapper(*args, **kwargs):
            counts[name] += 1
            return original(*args, **kwargs)
        return wrapper
    monkeypatch.setattr(compiled, "translate", counting("translate", compiled.translate))
    monkeypatch.setattr(specialised, "load", counting("load", specialised.load))

    def threaded_loss(x):
        return np.sum(np.tanh(x) * x)
    g = adcompile.grad(threaded_loss)
    x = np.linspace(-1.0, 1.0, 5)
    expected = np.tanh(x) + x * (1 - np.tanh(x) ** 2)
    barrier = threading.Barrier(8)
    results = [None] * 8

    def call(k):
        barrier.wait(timeout=60)
        results[k] = g(x)
    threads = [threading.Thread(target=call, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=TIMEOUT)
    assert all(not thread.is_alive() for thread in threads)
    for result in results:
        np.testing.assert_allclose(result, expected, rtol=1e-12)
    assert counts == {"translate": 1, "load": 1}
    dispatcher = g._specs[g._last_signature][2]
    assert len(dispatcher.overloads) == 1
    assert sum(dispatcher.stats.cache_misses.values()) + sum(dispatcher.stats.cache_hits.values()) == 1
