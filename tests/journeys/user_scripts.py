"""Running a journey's script as a user runs it: a fresh Python process on the default backend
(numba, the lowering on), with a cache folder of its own."""
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def run_script(name, tmp_path, timeout=3600):
    """The JSON lines ``name`` (a script in this folder) printed; fails with its stderr if it failed."""
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("ADCOMPILE_FUSE", None)
    run = subprocess.run([sys.executable, str(HERE / name)], capture_output=True, text=True, env=env,
                         timeout=timeout)
    assert run.returncode == 0, run.stderr[-3000:]
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
