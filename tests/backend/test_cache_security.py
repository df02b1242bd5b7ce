"""The compile cache runs only code adcompile wrote: attacks by another local user.

Each attack plants, in one kind of cache file (a generated module, the numba index or data file
of a generated function, the index or data file of a runtime helper), content that writes a
marker file when it is imported or unpickled, and gives the file (or its folder) one weakness
another user could exploit: writable by others, owned by another user, a symbolic link to a file
they own, a folder that is a symbolic link to theirs, a folder writable by others or owned by
them. A fresh process (numba's in-process state would hide a planted file) then computes a
gradient: the marker must never be written, the gradient must be right, and nothing may be
written into the attacker's folder. Planted pickles carry a correct checksum (anyone can compute
a sha256), so what stops them is the trust check, not the checksum. Further: names that are
paths (``..``, absolute) never put a file outside the cache folder, a symlinked
``ADCOMPILE_CACHE_DIR`` is judged where the link lives and where it points, and a whole run
(compile, grad, a Module's grad, under a fresh HOME and temporary folder) writes only inside the
cache folder. Changing owners needs root: those cases are skipped otherwise.
"""
import hashlib
import json
import os
import pickle
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import adcompile
from adcompile import nn
from adcompile.backend import cache_folder
from adcompile.backend.trust import distrust_reason
from adcompile.runtime import helper_cache

TIMEOUT = 300
OTHER_USER = 12345
IS_ROOT = hasattr(os, "getuid") and os.getuid() == 0
needs_root = pytest.mark.skipif(not IS_ROOT, reason="changing a file's owner needs root")

X = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
B = np.array([0.5, -1.0, 2.0, 0.25])

# A gradient whose code calls a runtime helper compiled by numba (max's cotangent goes where
# ``x == rt.broadcast_to_shape(max, x)``; the rest is fused into loops).
PROGRAM = textwrap.dedent('''
    import json, warnings
    import numpy as np
    import adcompile

    def loss(x, b):
        return np.sum(np.tanh(x * b)) + np.max(x)

    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    b = np.array([0.5, -1.0, 2.0, 0.25])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gx, gb = adcompile.grad(adcompile.compile(loss, tiered=False), wrt=(0, 1))(x, b)
    print(json.dumps({"gx": gx.tolist(), "gb": gb.tolist(),
                      "warnings": [str(w.message) for w in caught if "adcompile" in str(w.message)]}))
''')


def expected_gradient():
    slope = 1.0 - np.tanh(X * B) ** 2
    return slope * B + (X == X.max()), np.sum(slope * X, axis=0)


def run_program(folder, cache, **env):
    path = folder / "program.py"
    if not path.exists():
        path.write_text(PROGRAM)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT,
                         env={**os.environ, "ADCOMPILE_CACHE_DIR": str(cache), **env})
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.splitlines()[-1])
    gx, gb = expected_gradient()
    np.testing.assert_allclose(result["gx"], gx, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(result["gb"], gb, rtol=1e-12, atol=1e-15)
    return result


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache folder holding the program's generated module, its numba files and the helpers'."""
    folder = tmp_path_factory.mktemp("warm")
    cache = folder / "cache"
    run_program(folder, cache)
    return cache


@pytest.fixture
def victim(warm_cache, tmp_path):
    """(program folder, a copy of the warm cache, the attacker's folder, the marker's path)."""
    cache = tmp_path / "cache"
    shutil.copytree(warm_cache, cache, symlinks=True)
    attacker = tmp_path / "attacker"
    attacker.mkdir()
    return tmp_path, cache, attacker, tmp_path / "marker"


# ------------------------------------------------------------------ what an attacker plants
class WritesMarker:
    """Unpickling it writes the marker file: what a planted pickle could do."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return exec, (f"open({self.path!r}, 'w').write('unpickled')",)


def checksummed(payload):
    return hashlib.sha256(payload).digest() + payload


def in_the_format_of(path, payload):
    """``payload`` as the reader of ``path`` expects it: with a checksum if the file has one."""
    blob = path.read_bytes() if path.exists() else b""
    return checksummed(payload) if hashlib.sha256(blob[32:]).digest() == blob[:32] else payload


def evil_index(marker, path):
    return in_the_format_of(path, pickle.dumps(WritesMarker(marker)) + pickle.dumps(("stamp", {})))


def evil_data(marker, path):
    return in_the_format_of(path, pickle.dumps(WritesMarker(marker)))


def evil_source(marker, good):
    return f"open({str(marker)!r}, 'w').write('imported')\n".encode() + good


def generated_source(cache):
    return next(cache.glob("loss_grad_*.py"))


def helper_folder(cache):
    return cache / "__pycache__" / f"runtime-{helper_cache.runtime_digest()}"


def function_files(cache):
    return sorted((cache / "__pycache__").glob("loss_grad_*.nb[ic]"))


def forget_the_function(cache):
    """Remove the generated function's numba files: its compilation then reads the helpers'
    files (a cached function has the helpers' machine code in its own and reads none)."""
    for path in function_files(cache):
        path.unlink()


def helper_files(suffix):
    def locate(cache):
        forget_the_function(cache)
        return sorted(helper_folder(cache).glob(f"*{suffix}"))
    return locate


KINDS = {  # kind -> (the attacked files in a cache folder, the planted content)
    "generated module": (lambda cache: [generated_source(cache)],
                         lambda path, marker: evil_source(marker, path.read_bytes())),
    "function index": (lambda cache: [next((cache / "__pycache__").glob("loss_grad_*.nbi"))],
                       lambda path, marker: evil_index(marker, path)),
    "function data": (lambda cache: [next((cache / "__pycache__").glob("loss_grad_*.nbc"))],
                      lambda path, marker: evil_data(marker, path)),
    "helper index": (helper_files(".nbi"), lambda path, marker: evil_index(marker, path)),
    "helper data": (helper_files(".nbc"), lambda path, marker: evil_data(marker, path)),
}


def planted_world_writable(path, content, attacker):
    path.write_bytes(content)
    path.chmod(0o666)


def planted_foreign(path, content, attacker):
    path.write_bytes(content)
    os.chown(path, OTHER_USER, OTHER_USER)


def planted_symlinked_file(path, content, attacker):
    attacker.mkdir(exist_ok=True)
    target = attacker / path.name
    target.write_bytes(content)
    os.chown(target, OTHER_USER, OTHER_USER)
    path.unlink()
    path.symlink_to(target)


FILE_WEAKNESSES = {
    "writable by others": planted_world_writable,
    "owned by another user": planted_foreign,
    "a symbolic link to another user's file": planted_symlinked_file,
}


def snapshot(folder):
    return sorted((str(p.relative_to(folder)), p.lstat().st_size, p.lstat().st_mtime_ns) for p in folder.rglob("*"))


def combinations(first, second, default):
    """Every pair of ``first`` x ``second``; those not in ``default`` marked slow (each subprocess
    compiles what the attack made it discard: the default run keeps every kind and weakness once)."""
    return [pytest.param(a, b, marks=() if (a, b) in default else pytest.mark.slow)
            for a in first for b in second]


@needs_root
@pytest.mark.parametrize("kind, weakness", combinations(KINDS, FILE_WEAKNESSES, {
    ("generated module", "a symbolic link to another user's file"), ("function index", "writable by others"),
    ("function data", "owned by another user"), ("helper index", "writable by others"),
    ("helper index", "owned by another user"), ("helper data", "a symbolic link to another user's file")}))
def test_a_planted_cache_file_is_never_run(victim, kind, weakness):
    program, cache, attacker, marker = victim
    locate, content = KINDS[kind]
    paths = locate(cache)
    assert paths, f"the warm cache holds no {kind}"
    for k, path in enumerate(paths):
        FILE_WEAKNESSES[weakness](path, content(path, marker), attacker / str(k))
    before = snapshot(attacker)
    run_program(program, cache)
    assert not marker.exists(), f"a planted {kind} ran"
    assert snapshot(attacker) == before
    # the files the run consulted were deleted (or rewritten by us): at least one was
    assert any(not os.path.lexists(path) or distrust_reason(path) is None for path in paths)
    run_program(program, cache)  # and the cache works afterwards
    assert not marker.exists()


def helper_folder_read(cache):
    forget_the_function(cache)
    return helper_folder(cache)


FOLDERS = {  # the folders whose files are numba's pickles
    "function files": lambda cache: cache / "__pycache__",
    "helper files": helper_folder_read,
}


def plant_in(folder, marker):
    """Every numba file in ``folder`` replaced by a pickle writing the marker."""
    for path in folder.iterdir():
        if path.suffix in (".nbi", ".nbc"):
            path.write_bytes(evil_index(marker, path) if path.suffix == ".nbi" else evil_data(marker, path))


@needs_root
@pytest.mark.parametrize("which", list(FOLDERS))
def test_a_folder_linked_to_another_users_folder_is_replaced_and_never_read(victim, which):
    program, cache, attacker, marker = victim
    folder = FOLDERS[which](cache)
    target = attacker / "theirs"
    shutil.copytree(folder, target, symlinks=True)
    plant_in(target, marker)
    for path in [target, *target.rglob("*")]:
        os.chown(path, OTHER_USER, OTHER_USER, follow_symlinks=False)
    target.chmod(0o777)
    shutil.rmtree(folder)
    folder.symlink_to(target)
    before = snapshot(attacker)
    result = run_program(program, cache)
    assert not marker.exists()
    assert snapshot(attacker) == before, "adcompile wrote into the other user's folder"
    assert not folder.is_symlink() and folder.is_dir()
    assert result["warnings"] == []  # a link in our own folder is ours to delete: the cache goes on


FOLDER_WEAKNESSES = {
    "writable by others": lambda folder: folder.chmod(0o777),
    "owned by another user": lambda folder: os.chown(folder, OTHER_USER, OTHER_USER),
}


@needs_root
@pytest.mark.parametrize("which, weakness", combinations(FOLDERS, FOLDER_WEAKNESSES, {
    ("helper files", "writable by others"), ("function files", "owned by another user")}))
def test_a_folder_others_can_write_refuses_the_cache(victim, which, weakness):
    program, cache, attacker, marker = victim
    folder = FOLDERS[which](cache)
    plant_in(folder, marker)
    FOLDER_WEAKNESSES[weakness](folder)
    result = run_program(program, cache)
    assert not marker.exists()
    assert len(result["warnings"]) == 1 and "not using the compile cache folder" in result["warnings"][0]


# ------------------------------------------------------------------ damaged helper files
DAMAGES = {
    "truncated": lambda path: path.write_bytes(path.read_bytes()[:40]),
    "not a pickle": lambda path: path.write_bytes(checksummed(b"\x80\x04garbage")),
    "an index of the wrong structure": lambda path: path.write_bytes(
        checksummed(pickle.dumps(__import__("numba").__version__) + pickle.dumps(["stamp", "not a dict"]))),
    "numba's format without a checksum": lambda path: path.write_bytes(
        pickle.dumps(__import__("numba").__version__) + pickle.dumps(("stamp", {}))),
}


@pytest.mark.parametrize("damage", [pytest.param(damage, marks=() if damage in (
    "truncated", "an index of the wrong structure") else pytest.mark.slow) for damage in DAMAGES])
def test_a_damaged_helper_index_is_recompiled_not_an_error(victim, damage):
    program, cache, _, _ = victim
    paths = helper_files(".nbi")(cache)
    assert paths
    for path in paths:
        DAMAGES[damage](path)
    damaged = {path: path.read_bytes() for path in paths}
    run_program(program, cache)
    rewritten = [path for path in paths if path.read_bytes() != damaged[path]]
    assert rewritten
    for path in rewritten:
        payload = path.read_bytes()
        assert hashlib.sha256(payload[32:]).digest() == payload[:32]  # rewritten whole
    run_program(program, cache)


def test_an_index_naming_a_data_file_outside_its_folder_is_not_followed(victim):
    program, cache, attacker, marker = victim
    outside = cache.parent / "outside.nbc"
    outside.write_bytes(checksummed(pickle.dumps(WritesMarker(marker))))
    function_index = next((cache / "__pycache__").glob("loss_grad_*.nbi"))
    for index in [function_index, *helper_folder(cache).glob("*.nbi")]:
        with open(index, "rb") as handle:  # our own, trusted index: read it as numba would
            handle.seek(32)
            version = pickle.load(handle)
            stamp, overloads = pickle.loads(handle.read())
        redirected = {key: f"../{'../' * (index.parent != cache / '__pycache__')}outside.nbc" for key in overloads}
        index.write_bytes(checksummed(pickle.dumps(version) + pickle.dumps((stamp, redirected))))
    run_program(program, cache)  # the function's index is read: a miss, compiled; the helpers' too
    assert not marker.exists()


# ------------------------------------------------------------------ names that are paths
class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = adcompile.Parameter(np.array([[0.5, -1.0, 2.0]]))

    def forward(self, x):
        return x @ self.weight.T


def _loss(model, x):
    return np.sum(np.tanh(model(x)))


@pytest.mark.parametrize("name", ["/{outside}/pwn", "__pycache__/../../{outside}/pwn", "../pwn", "class"])
def test_a_module_derivatives_name_that_is_a_path_stays_in_the_cache(tmp_path, monkeypatch, name):
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    outside.mkdir()
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(cache))

    def loss(model, x):
        return np.sum(np.tanh(model(x)))
    loss.__name__ = loss.__qualname__ = name.format(outside=str(outside).lstrip("/"))
    model, x = Affine(), np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]])
    grads = adcompile.grad(adcompile.compile(loss, backend="python"))(model, x)
    slope = 1.0 - np.tanh(x @ model.weight.data.T) ** 2
    np.testing.assert_allclose(grads["weight"], slope.T @ x, rtol=1e-12)
    assert list(outside.iterdir()) == [] and list(tmp_path.glob("*.py")) == []
    assert all(path.parent == cache for path in cache.glob("**/*.py"))


def test_a_loss_defined_inside_a_function_compiles_for_a_module():
    def make():
        def loss_fn(model, x):
            return np.sum(np.tanh(model(x)))
        return loss_fn
    model, x = Affine(), np.array([[1.0, 2.0, 3.0]])
    grads = adcompile.grad(adcompile.compile(make(), backend="python"))(model, x)
    slope = 1.0 - np.tanh(x @ model.weight.data.T) ** 2
    np.testing.assert_allclose(grads["weight"], slope.T @ x, rtol=1e-12)


def test_optimizer_and_training_programs_whose_names_are_paths_stay_in_the_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(cache))
    Odd = type("../../odd sgd", (adcompile.optim.SGD,), {"backend": "python"})
    model = Affine().compile("python")
    start = model.weight.data.copy()
    x = np.array([[1.0, 2.0, 3.0]])
    slope = 1.0 - np.tanh(x @ start.T) ** 2
    optimizer = Odd(model.parameters(), lr=0.1)
    adcompile.backward(_loss, model, x)
    optimizer.step()  # the optimizer's own compiled update
    np.testing.assert_allclose(model.weight.data, start - 0.1 * (slope.T @ x), rtol=1e-12)
    moved = model.weight.data.copy()
    adcompile.train_step(_loss, model, Odd(model.parameters(), lr=0.1))(x)  # a training program
    slope = 1.0 - np.tanh(x @ moved.T) ** 2
    np.testing.assert_allclose(model.weight.data, moved - 0.1 * (slope.T @ x), rtol=1e-12)
    names = sorted(p.name for p in cache.glob("*.py"))
    assert any(name.startswith("odd_sgd_step_") for name in names) and any("train_step" in n for n in names)
    assert list(tmp_path.glob("*.py")) == [] and all(p.parent == cache for p in cache.glob("**/*.py"))


# ------------------------------------------------------------------ a symlinked cache folder
@pytest.fixture
def fresh_location(monkeypatch):
    monkeypatch.delenv("ADCOMPILE_DISABLE_CACHE", raising=False)
    monkeypatch.setattr(cache_folder, "_resolved", {})


def test_a_link_in_a_folder_others_can_write_is_refused(tmp_path, monkeypatch, fresh_location):
    shared, private = tmp_path / "shared", tmp_path / "private"
    shared.mkdir()
    shared.chmod(0o777)  # not sticky: another user may re-point the link
    private.mkdir(mode=0o700)
    (shared / "cache").symlink_to(private)
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(shared / "cache"))
    with pytest.warns(UserWarning, match=f"{shared}.* writable by other users and not sticky"):
        folder, persistent = cache_folder.cache_location()
    assert not persistent and folder != private


def test_a_link_to_a_folder_in_a_folder_others_can_write_is_refused(tmp_path, monkeypatch, fresh_location):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "cache").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(shared / "cache")
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(tmp_path / "link"))
    with pytest.warns(UserWarning, match="not sticky"):
        assert cache_folder.cache_location()[1] is False


def test_a_folder_writable_by_others_two_levels_up_is_refused(tmp_path, monkeypatch, fresh_location):
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a").chmod(0o777)
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(tmp_path / "a" / "b" / "cache"))
    with pytest.warns(UserWarning, match="above it is writable by other users"):
        assert cache_folder.cache_location()[1] is False


def test_a_trusted_link_is_followed_and_judged_again_when_re_pointed(tmp_path, monkeypatch, fresh_location):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(mode=0o700)
    second.mkdir(mode=0o700)
    link = tmp_path / "cache"
    link.symlink_to(first)
    monkeypatch.setenv("ADCOMPILE_CACHE_DIR", str(link))
    assert cache_folder.cache_location() == (first, True)
    link.unlink()
    link.symlink_to(second)
    second.chmod(0o777)  # the new folder is judged, not the old decision kept
    with pytest.warns(UserWarning, match="writable by other users"):
        folder, persistent = cache_folder.cache_location()
    assert not persistent and folder not in (first, second)
    second.chmod(0o700)
    link.unlink()
    link.symlink_to(first)
    assert cache_folder.cache_location() == (first, True)
    (first / "f_0123456789abcdef.py").write_text("")
    link.unlink()
    link.symlink_to(second)
    (second / "keep_0123456789abcdef.py").write_text("")
    assert adcompile.clear_cache() == 1  # the folder the link names now, judged again
    assert (first / "f_0123456789abcdef.py").exists() and not (second / "keep_0123456789abcdef.py").exists()


# ------------------------------------------------------------------ nothing written elsewhere
RUN = textwrap.dedent('''
    import numpy as np
    import adcompile
    from adcompile import nn

    def loss(x, b):
        return np.sum(np.tanh(x * b))

    class Affine(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = adcompile.Parameter(np.array([[0.5, -1.0, 2.0]]))

        def forward(self, x):
            return x @ self.weight.T

    def model_loss(model, x):
        return np.sum(np.tanh(model(x)))

    x = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    b = np.array([0.5, -1.0, 2.0, 0.25])
    f = adcompile.compile(loss, tiered=False)
    assert np.isclose(f(x, b), np.sum(np.tanh(x * b)))
    gx, gb = adcompile.grad(f, wrt=(0, 1))(x, b)
    assert np.allclose(gx, (1 - np.tanh(x * b) ** 2) * b)
    model, data = Affine(), np.array([[1.0, 2.0, 3.0]])
    grads = adcompile.grad(adcompile.compile(model_loss, tiered=False))(model, data)
    slope = 1.0 - np.tanh(data @ model.weight.data.T) ** 2
    assert np.allclose(grads["weight"], slope.T @ data)
    print("ok")
''')


def test_a_run_writes_only_inside_the_cache_folder(tmp_path):
    home, temporary, cache, program = (tmp_path / name for name in ("home", "tmp", "cache", "program"))
    for folder in (home, temporary, program):
        folder.mkdir()
    (program / "run.py").write_text(RUN)
    before = {p for p in tmp_path.rglob("*")}
    env = {key: value for key, value in os.environ.items() if key not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(home), TMPDIR=str(temporary), ADCOMPILE_CACHE_DIR=str(cache), PYTHONDONTWRITEBYTECODE="1")
    out = subprocess.run([sys.executable, str(program / "run.py")], capture_output=True, text=True,
                         timeout=2 * TIMEOUT, env=env, cwd=program)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
    created = sorted(str(p) for p in set(tmp_path.rglob("*")) - before if cache not in p.parents and p != cache)
    assert created == []
    assert list(cache.glob("loss_*.py")) and list(helper_folder(cache).glob("*.nbi"))


# ------------------------------------------------------------------ the gate itself, in process
def test_the_gate_reads_no_link_and_writes_through_none(tmp_path):
    from adcompile.backend import trust
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    root.mkdir(mode=0o700)
    elsewhere.mkdir()
    theirs = elsewhere / "theirs"
    theirs.write_bytes(b"planted")
    (root / "f").symlink_to(theirs)
    with pytest.raises(trust.Untrusted, match="symbolic link"):
        trust.read_trusted(root, root / "f")
    assert not os.path.lexists(root / "f") and theirs.read_bytes() == b"planted"  # deleted, not followed
    (root / "f").symlink_to(theirs)
    trust.write_trusted(root, root / "f", b"ours")
    assert not (root / "f").is_symlink() and (root / "f").read_bytes() == b"ours"
    assert theirs.read_bytes() == b"planted" and (root / "f").stat().st_mode & 0o777 == 0o600
    for outside in (root / ".." / "elsewhere" / "theirs", elsewhere / "theirs"):
        with pytest.raises(trust.Untrusted, match="not inside"):
            trust.read_trusted(root, outside)
    (root / "sub").symlink_to(elsewhere)
    with pytest.raises(trust.UntrustedFolder, match="symbolic link"):
        trust.read_trusted(root, root / "sub" / "theirs")
    trust.ensure_folder(root, root / "sub")  # a link where a folder belongs: deleted, made
    assert (root / "sub").is_dir() and not (root / "sub").is_symlink() and theirs.exists()
    (root / "sub").chmod(0o777)
    with pytest.raises(trust.UntrustedFolder, match="writable by other users"):
        trust.write_trusted(root, root / "sub" / "g", b"")
