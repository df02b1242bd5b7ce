"""A process that loads numba code keeps freed arrays' memory for the next ones, as a process
that compiled does (``adcompile/backend/allocator.py``): counted in page faults, in fresh
processes, since the setting is per process."""
import os
import subprocess
import sys
import textwrap

import pytest

# four 1 MiB arrays made and freed, 50 times: without the setting glibc returns their pages
# to the system after each round and faults them in again (4 x 256 pages a round)
ROUNDS = textwrap.dedent('''
    import resource, sys
    import numpy as np
    import adcompile

    @adcompile.compile(tiered=False)
    def double(x):
        return 2.0 * x

    double(np.ones(3))  # loads (and compiles) a numba-backend function
    from adcompile.backend import allocator

    def faults(rounds):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(rounds):
            arrays = [np.ones(1 << 17) for _ in range(4)]
            del arrays
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before

    faults(2)
    print(allocator.state(), "|", faults(50))
''')


def run_rounds(tmp_path, **env):
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "GLIBC_TUNABLES")}
    environment.update(ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"), **env)
    script = tmp_path / "rounds.py"
    script.write_text(ROUNDS)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=environment,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    state, faults = done.stdout.strip().splitlines()[-1].split(" | ")
    return state, int(faults)


def test_freed_arrays_are_reused_without_faulting_their_pages_again(tmp_path):
    state, faults = run_rounds(tmp_path)
    if state == "off: not glibc":
        pytest.skip("glibc's mallopt only")
    assert state == "on"
    assert faults < 50 * 256  # fewer than one faulted array per round


def test_the_setting_can_be_turned_off_and_then_pages_fault_again(tmp_path):
    state, faults = run_rounds(tmp_path, ADCOMPILE_KEEP_FREED_MEMORY="0")
    assert state == "off: ADCOMPILE_KEEP_FREED_MEMORY=0"
    if sys.platform.startswith("linux"):  # the rounds above are what the setting saves
        assert faults >= 50 * 4 * 256 * 0.9


def test_the_users_own_glibc_settings_are_kept(tmp_path):
    state, _ = run_rounds(tmp_path, MALLOC_TRIM_THRESHOLD_="1000000")
    assert state == "off: the user's MALLOC_TRIM_THRESHOLD_ is kept"
