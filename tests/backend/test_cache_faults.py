"""A cache folder that cannot be written (a full disk, a read-only mount) never breaks working
code: adcompile compiles in memory with one warning, a tiered function keeps answering, and a
warm cache that cannot be written is still read. Each case runs in a fresh process whose
``os.open`` fails, as the file system would, for every file created in the cache folder."""
import json
import os
import subprocess
import sys

import pytest

FAULTY_FILE_SYSTEM = """
import errno, os, sys
CACHE = os.path.realpath(os.environ["ADCOMPILE_CACHE_DIR"])
_open, _mkdir = os.open, os.mkdir
def refusing(code):
    def check(path):
        if os.path.realpath(os.fspath(path)).startswith(CACHE):
            raise OSError(code, os.strerror(code), os.fspath(path))
    return check
check = refusing(getattr(errno, sys.argv[1], errno.EROFS))
def faulty_open(path, flags, *args, **kwargs):
    if flags & (os.O_CREAT | os.O_WRONLY | os.O_RDWR):
        check(path)
    return _open(path, flags, *args, **kwargs)
def faulty_mkdir(path, *args, **kwargs):
    if os.path.lexists(path):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), os.fspath(path))
    check(path)
    return _mkdir(path, *args, **kwargs)
if sys.argv[1] != "none":
    os.open, os.mkdir = faulty_open, faulty_mkdir
"""

PROGRAM = FAULTY_FILE_SYSTEM.replace('if sys.argv[1] != "none":', 'if sys.argv[1] != "none":  # the fault') + """
import json, warnings
import numpy as np
import adcompile

def loop_loss(w):
    s = 0.0
    for i in range(w.shape[0]):
        s = s + np.sin(w[i]) ** 2
    return s

def loop_free(w):
    return np.sum(np.tanh(w) ** 2)

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    w = np.array([0.3, -0.4, 1.1])
    gradient = adcompile.grad(adcompile.compile(loop_loss))(w)
    tiered = adcompile.compile(loop_free, tiered=True)
    first = [float(tiered(w)) for _ in range(3)]
    tier = tiered.tier(wait=True)
    after = float(tiered(w))
print(json.dumps({"gradient": gradient.tolist(), "first": first, "after": after, "tier": tier,
                  "warnings": [str(warning.message) for warning in caught
                               if "cache folder" in str(warning.message)]}))
"""


def run(fault, cache):
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=str(cache))
    env.pop("ADCOMPILE_TIERED", None)
    script = cache.parent / "program.py"
    script.write_text(PROGRAM)
    done = subprocess.run([sys.executable, str(script), fault], capture_output=True, text=True, env=env,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_values(report):
    import numpy as np
    w = np.array([0.3, -0.4, 1.1])
    np.testing.assert_allclose(report["gradient"], 2 * np.sin(w) * np.cos(w), rtol=1e-12)
    expected = float(np.sum(np.tanh(w) ** 2))
    np.testing.assert_allclose(report["first"] + [report["after"]], expected, rtol=1e-12)


@pytest.mark.parametrize("fault", ["ENOSPC", "EROFS"])
def test_a_folder_that_cannot_be_written_compiles_in_memory_with_one_warning(tmp_path, fault):
    (tmp_path / "cache").mkdir(mode=0o700)
    report = run(fault, tmp_path / "cache")
    check_values(report)
    assert report["tier"] in ("numba", "python")
    assert len(report["warnings"]) == 1, report["warnings"]
    assert "cannot write" in report["warnings"][0]


def test_a_warm_cache_on_a_read_only_mount_is_read(tmp_path):
    cache = tmp_path / "cache"
    check_values(run("none", cache))
    before = sorted(p.name for p in cache.rglob("*"))
    report = run("EROFS", cache)
    check_values(report)
    assert report["tier"] == "numba"
    assert sorted(p.name for p in cache.rglob("*")) == before
