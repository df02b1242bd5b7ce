"""Background compiles still running at interpreter exit, finished in a detached process.

A tiered function (``tiers.py``) runs its generated Python while a daemon thread compiles the
same source with numba; a script that ends first kills that thread, and numba's disk cache is
left without the machine code, so every run of the script would start from the Python tier
again. At exit, this module hands the unfinished compiles to a new process, detached from
this one (its own session, no standard streams), which compiles them and so fills the cache;
the next run loads the machine code from it in milliseconds.

The invariant that makes this correct: the generated source is a pure function of the program
(the same bytes in every process, ``cache_key.py``), and the cache entry of a compile is named
by that source, the backend, the versions involved and the numba argument types. A compile of
the same source file for the same numba types in another process therefore writes exactly the
cache entry this process would have written; the job hands over the source text itself, so
the detached process needs nothing of the program. Cache files are written whole or not at
all (``numba_cache.py``), so a detached compile racing a process that compiles the same code
leaves a correct cache either way.

- :func:`register` keeps the tiered functions whose background compile has started;
  :func:`finish_at_exit` (registered with ``atexit``) writes a job file into the cache folder,
  through the gate of :mod:`.trust`, for those whose compile has not ended, and starts
  a Python process running :func:`main` on the job file, detached, with this process's
  environment and this adcompile package; it says so in one line on stderr.
- The detached process (:func:`main`) reads the job (a trusted read; the file is deleted),
  runs at a lower priority (nice 10), holds a lock file ``<module file>.compiling`` (its pid)
  per compile while it compiles, and swallows every error: a compile that fails there is
  compiled again by the next run, as it would be without this module.
- A background compile of another process that starts while a live detached compile holds
  the lock of the same module waits for it (:func:`wait_for_detached_compile`, bounded) and
  then loads the machine code from the cache instead of compiling it a second time.

Off when ``ADCOMPILE_FINISH_COMPILES=0`` (or false, no, off), when the cache folder is not
persistent (nothing would be kept), and under ``NUMBA_DISABLE_JIT`` (nothing to compile).
Functions not tiered (``ADCOMPILE_TIERED=0``, ``tiered=False``) compile before their first
call returns and are never registered.
"""
import atexit
import os
import pickle
import subprocess
import sys
import threading
import time
from pathlib import Path

from .cache_folder import cache_location
from .cache_key import module_file_name
from .loader import load
from .trust import Untrusted, read_trusted, remove_entry, write_trusted

FINISH_VARIABLE = "ADCOMPILE_FINISH_COMPILES"
JOB_PREFIX, JOB_SUFFIX = "finish_compiles_", ".job"
LOCK_SUFFIX = ".compiling"
WAIT_LIMIT = 900.0  # seconds a background compile waits for a detached one (numba's longest compiles)
POLL_INTERVAL = 0.5

# The detached process's program: main() of this module (not ``python -m``, which would run a
# second copy of this module beside the one that importing adcompile imports).
_DETACHED_MAIN = "import sys; from adcompile.backend.finish_compiles import main; sys.exit(main(sys.argv[1:]))"
_PACKAGE_ROOT = Path(__file__).resolve().parents[2]  # the folder holding this adcompile package
_lock = threading.Lock()
_started = set()  # TieredFunctions whose background compile has started


def enabled():
    """Whether unfinished compiles are finished in a detached process at exit."""
    if os.environ.get(FINISH_VARIABLE, "").strip().lower() in ("0", "false", "no", "off"):
        return False
    return os.environ.get("NUMBA_DISABLE_JIT", "").strip() in ("", "0")


def register(tiered):
    """Remember ``tiered`` (a ``TieredFunction`` whose background compile has just started)."""
    with _lock:
        _started.add(tiered)


# ------------------------------------------------------------------ lock files
def lock_file(folder, source, name):
    """The lock file a detached compile of ``source``'s function ``name`` holds in ``folder``."""
    return folder / (module_file_name(source, name, "numba")[0] + LOCK_SUFFIX)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def compiling_elsewhere(folder, lock):
    """Whether the lock file ``lock`` in ``folder`` is held by another live process."""
    try:
        pid = int(read_trusted(folder, lock))
    except (OSError, Untrusted, ValueError):
        return False
    return pid != os.getpid() and _alive(pid)


def wait_for_detached_compile(source, name, limit=WAIT_LIMIT):
    """Wait (at most ``limit`` seconds) while a live detached process compiles ``source``'s
    function ``name`` into the cache, so that this process then loads it instead of compiling
    the same code at the same time."""
    folder, persistent = cache_location()
    if not persistent:
        return
    lock = lock_file(folder, source, name)
    deadline = time.monotonic() + limit
    while compiling_elsewhere(folder, lock) and time.monotonic() < deadline:
        time.sleep(POLL_INTERVAL)


# ------------------------------------------------------------------ the job, at exit
def write_job(folder, entries):
    """Write the job ``entries`` (``(source, name, options, numba types)`` each) into a new
    file in ``folder``; its path."""
    job = folder / f"{JOB_PREFIX}{os.getpid()}_{os.urandom(6).hex()}{JOB_SUFFIX}"
    write_trusted(folder, job, pickle.dumps(list(entries), protocol=pickle.HIGHEST_PROTOCOL))
    return job


def read_job(folder, job):
    """The entries of the job file ``job`` in ``folder`` (read through the gate), which is deleted."""
    try:
        return pickle.loads(read_trusted(folder, job))
    finally:
        remove_entry(folder, job)


def _unfinished(folder):
    """The job entries of the registered compiles that have not ended and that no other live
    process is finishing."""
    with _lock:
        started = list(_started)
    entries = (tiered.unfinished_compile() for tiered in started)
    return [entry for entry in entries
            if entry is not None and not compiling_elsewhere(folder, lock_file(folder, entry[0], entry[1]))]


def _detached_environment():
    """This process's environment, with this adcompile package first on the path (the digest
    of a cache entry covers adcompile's code, so the compile must run the same package)."""
    environment = dict(os.environ)
    path = environment.get("PYTHONPATH")
    environment["PYTHONPATH"] = str(_PACKAGE_ROOT) + (os.pathsep + path if path else "")
    return environment


def finish_at_exit():
    """Start a detached process finishing the registered compiles that have not ended."""
    if not enabled():
        return
    try:
        folder, persistent = cache_location()
        entries = _unfinished(folder) if persistent else []
        if not entries:
            return
        job = write_job(folder, entries)
        try:
            process = subprocess.Popen([sys.executable, "-c", _DETACHED_MAIN, str(job)],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True,
                                       cwd=folder, env=_detached_environment())
        except BaseException:
            remove_entry(folder, job)
            raise
    except Exception:  # noqa: BLE001  (at exit: the next run compiles, as it would without this)
        return
    names = ", ".join(sorted({name for _, name, _, _ in entries}))
    print(f"adcompile: a background process (pid {process.pid}) finishes numba's compile of {names} into the "
          f"cache, so that the next run starts with machine code ({FINISH_VARIABLE}=0 turns this off)",
          file=sys.stderr)


atexit.register(finish_at_exit)


# ------------------------------------------------------------------ the detached process
def compile_entry(source, name, options, types):
    """Compile ``source``'s function ``name`` with numba for ``types``, into the disk cache."""
    dispatcher = load(source, name, "numba", options)
    dispatcher.compile(types)


def _hold(folder, lock):
    write_trusted(folder, lock, str(os.getpid()).encode())


def main(argv):
    """Run the job file ``argv[0]``: compile each entry into the cache; errors are swallowed.
    It runs at a lower priority: the user's next program comes first."""
    try:
        os.nice(10)
    except OSError:
        pass
    folder, persistent = cache_location()
    try:
        entries = read_job(folder, Path(argv[0]).resolve())
    except Exception:  # noqa: BLE001  (missing, untrusted or not a job: nothing to do)
        return 1
    if not persistent:
        return 0
    locks = [lock_file(folder, source, name) for source, name, _, _ in entries]
    held = []
    for lock in locks:
        if not compiling_elsewhere(folder, lock):
            _hold(folder, lock)
            held.append(lock)
    for entry, lock in zip(entries, locks):
        if lock not in held:
            continue
        try:
            compile_entry(*entry)
        except Exception:  # noqa: BLE001  (the next run compiles it again, as without this)
            pass
        finally:
            remove_entry(folder, lock)
    return 0

