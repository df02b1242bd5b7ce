"""Background compiles still running at exit, finished in a detached process
(``adcompile/backend/finish_compiles.py``), so that the next run starts with machine code.

The journey runs as a user runs a script: a fresh process calls a tiered function once and
exits while numba compiles; the detached process it leaves fills the cache, and the next fresh
process loads the machine code from it (its first call runs as Python while numba starts, as
``tiers.loads_quickly`` says). The other tests check the parts in this process, with
``subprocess.Popen`` replaced, so that they start no process.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

import numba
import numpy as np
import pytest

import adcompile
from adcompile.backend import finish_compiles, tiers

SCRIPT = """
import json
import numpy as np
import adcompile

def f(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.sin(x[i]) * x[i]
    return total

g = adcompile.compile(f)
value = g(np.linspace(0.0, 1.0, 50))
print(json.dumps({"tier": g.tier(), "value": float(value)}))
"""
THEN_WAIT = """
stats = g._specs[g._last_signature][2].stats  # (waits for the background load)
print(json.dumps({"tier": g.tier(), "value": float(value), "next": g.tier(wait=True),
                  "hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values())}))
"""
WAIT = 240.0  # seconds the detached compile may take on a busy machine


def run_script(folder, cache):
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(cache), ADCOMPILE_TIERED="1", ADCOMPILE_FINISH_COMPILES="1")
    env.pop("ADCOMPILE_FUSE", None)
    run = subprocess.run([sys.executable, str(folder / "script.py")], capture_output=True, text=True, env=env,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1]), run.stderr


def running(pid):
    """Whether process ``pid`` runs (a zombie left for its new parent to reap does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def pending(cache):
    """The job and lock files of detached compiles in ``cache``."""
    return sorted(path.name for path in cache.iterdir()
                  if path.name.endswith((finish_compiles.JOB_SUFFIX, finish_compiles.LOCK_SUFFIX)))


def test_a_script_ending_before_numba_leaves_machine_code_for_the_next_run(tmp_path):
    (tmp_path / "script.py").write_text(SCRIPT)
    cache = tmp_path / "cache"
    first, stderr = run_script(tmp_path, cache)
    assert first["tier"] == "python"  # the script ended while numba compiled
    (line,) = [line for line in stderr.splitlines() if line.startswith("adcompile:")]
    assert "ADCOMPILE_FINISH_COMPILES=0" in line and "compile of f into" in line
    pid = int(re.search(r"pid (\d+)", line).group(1))
    try:
        deadline = time.monotonic() + WAIT
        while (pending(cache) or running(pid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not pending(cache) and not running(pid), "the detached compile did not end in time"
    finally:
        if running(pid):
            os.killpg(pid, signal.SIGKILL)  # its own session: the compiler this test started
    (tmp_path / "script.py").write_text(SCRIPT + THEN_WAIT)
    second, stderr = run_script(tmp_path, cache)
    assert second["tier"] == "python"  # the first call ran while numba started and loaded the code
    assert second["next"] == "numba" and second["hits"] == 1 and second["misses"] == 0  # loaded, not compiled
    assert second["value"] == pytest.approx(first["value"], rel=1e-13)
    assert "adcompile:" not in stderr  # nothing left to finish


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A persistent cache folder of this test's own, and no compile registered."""
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(folder))
    monkeypatch.setattr(finish_compiles, "_started", set())
    return folder.resolve()


@pytest.fixture
def popen(monkeypatch):
    """``subprocess.Popen`` replaced: the commands it was given, no process started."""
    commands = []

    class Started:
        pid = 12345

        def __init__(self, command, **options):
            commands.append((command, options))
    monkeypatch.setattr(subprocess, "Popen", Started)
    return commands


ARGUMENTS = (np.zeros((3, 4)), np.zeros(5, dtype=np.float32)[::2], 1.5, 2, (np.ones(2), True))


def a_compile_still_running():
    """A tiered function whose background compile has started and not ended."""
    tiered = tiers.TieredFunction(None, "def f(x):\n    return x\n", "f", {"fastmath": False})
    tiered.first_arguments = ARGUMENTS
    finish_compiles.register(tiered)
    return tiered


def test_the_job_file_round_trips_the_numba_types(cache):
    entry = ("def f(x):\n    return x\n", "f", {"fastmath": False},
             tuple(numba.typeof(argument) for argument in ARGUMENTS))
    job = finish_compiles.write_job(cache, [entry])
    assert job.parent == cache and oct(job.stat().st_mode & 0o777) == oct(0o600)
    assert finish_compiles.read_job(cache, job) == [entry]
    assert not job.exists()  # read once, then deleted


def test_at_exit_a_running_compile_is_handed_to_a_detached_process(cache, popen, monkeypatch, capsys):
    monkeypatch.setenv("ADCOMPILE_FINISH_COMPILES", "1")
    tiered = a_compile_still_running()
    finish_compiles.finish_at_exit()
    ((command, options),) = popen
    assert command[:2] == [sys.executable, "-c"] and "finish_compiles import main" in command[2]
    assert options["start_new_session"] and options["close_fds"]
    assert options["stdin"] == options["stdout"] == options["stderr"] == subprocess.DEVNULL
    assert options["env"]["ADCOMPILE_CACHE_DIR"] == os.environ["ADCOMPILE_CACHE_DIR"]
    job = cache / os.path.basename(command[3])
    (entry,) = finish_compiles.read_job(cache, job)
    assert entry == (tiered.source, tiered.name, tiered.options, tiers.numba_types(ARGUMENTS))
    (line,) = capsys.readouterr().err.splitlines()
    assert "pid 12345" in line and "ADCOMPILE_FINISH_COMPILES=0" in line


@pytest.mark.parametrize("variable, value", [("ADCOMPILE_FINISH_COMPILES", "0"),
                                             ("ADCOMPILE_FINISH_COMPILES", "off"),
                                             ("NUMBA_DISABLE_JIT", "1"),
                                             ("ADCOMPILE_DISABLE_CACHE", "1")])
def test_switched_off_no_process_is_started(cache, popen, monkeypatch, capsys, variable, value):
    monkeypatch.setenv("ADCOMPILE_FINISH_COMPILES", "1")
    monkeypatch.setenv(variable, value)
    a_compile_still_running()
    finish_compiles.finish_at_exit()
    assert popen == [] and capsys.readouterr().err == ""
    assert list(cache.iterdir()) == []


def test_an_ended_compile_is_not_handed_over(cache, popen, monkeypatch):
    monkeypatch.setenv("ADCOMPILE_FINISH_COMPILES", "1")
    a_compile_still_running().done.set()
    finish_compiles.finish_at_exit()
    assert popen == []


def a_lock(cache, pid):
    lock = finish_compiles.lock_file(cache, "def f(x):\n    return x\n", "f")
    lock.write_bytes(str(pid).encode())
    lock.chmod(0o600)
    return lock


def test_a_compile_a_live_process_is_finishing_is_waited_for_not_handed_over_again(cache, popen, monkeypatch):
    monkeypatch.setenv("ADCOMPILE_FINISH_COMPILES", "1")
    a_lock(cache, os.getppid())  # a live process other than this one
    a_compile_still_running()
    finish_compiles.finish_at_exit()
    assert popen == []
    started = time.monotonic()
    finish_compiles.wait_for_detached_compile("def f(x):\n    return x\n", "f", limit=0.6)
    assert time.monotonic() - started >= 0.6


def test_the_lock_of_a_process_that_ended_is_ignored(cache):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    lock = a_lock(cache, ended.pid)
    assert not finish_compiles.compiling_elsewhere(cache, lock)
    started = time.monotonic()
    finish_compiles.wait_for_detached_compile("def f(x):\n    return x\n", "f", limit=30)
    assert time.monotonic() - started < 5


def test_clear_cache_removes_job_and_lock_files(cache):
    job = finish_compiles.write_job(cache, [])
    lock = a_lock(cache, os.getpid())
    assert adcompile.clear_cache() == 2
    assert not job.exists() and not lock.exists()
