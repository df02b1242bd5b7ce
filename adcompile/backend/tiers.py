"""Tiered execution: the generated Python runs while numba compiles the same source in the background.

numba takes seconds to compile a generated gradient (typing and LLVM), while the same source
run as Python with numpy answers in milliseconds. A ``TieredFunction`` runs the Python module
of the source (what ``backend="python"`` runs; both backends are tested to agree) until numba's
machine code for the first call's argument types is ready, compiled by a daemon thread
started at that first call; later calls then run the machine code. If numba fails, the next
call raises its error, so the caller explains it exactly as a failure of an ordinary first
numba call (``run_errors.py``: ``GeneratedCodeError``), at every call after, never lost.

Waiting for numba instead (the first call compiles, as without tiers) is chosen by
``adcompile.compile(f, tiered=False)``, or for every function by the environment variable
``ADCOMPILE_TIERED=0``. The caller (``api/specialised.py``) also waits for numba where that
costs milliseconds (:func:`loads_quickly`): numba's disk cache holds the function and this
process has already loaded machine code. The first load of a process pays numba's start
(its import, its typing registries, the runtime helpers: about 0.7 CPU-s, more than most
scripts' Python tier takes), so it runs behind the Python tier as a compile does, and a warm
cache is never slower than a cold one. Code with loops may run
far longer as Python than numba takes to compile it, or far shorter: its Python tier hands a
run over to the machine code as soon as that is ready (``handover.py``; the arrays it writes
into are put back first); code with loops that pushes onto or pops from a tape it was given
(the backward half of a ``vjp``) waits for numba.

The compiling thread is a daemon: a process that exits while it runs does not wait for it
(numba's cache files are written whole or not at all, so nothing half-written is left), but
hands the compile to a detached process that finishes it into the disk cache, so the next run
starts with machine code (``finish_compiles.py``; ``ADCOMPILE_FINISH_COMPILES=0`` turns it
off). A compile such a process is still running for the same code is waited for, then loaded
from the cache. A forked child starts its own compile at its next call.
"""
import os
import threading

from .cache_folder import cache_dir, cache_location, warn_unwritable
from . import finish_compiles
from .cache_key import module_file_name
from .handover import MachineCodeReady, WrittenArguments, install_checks, with_handover_checks
from .loader import load
from .source_files import numba_cache_files

TIERED_VARIABLE = "ADCOMPILE_TIERED"
PYTHON, NUMBA = "python", "numba"

_lock = threading.Lock()
_tiered = {}  # (source, name, cache folder) -> TieredFunction: one background compile per source


def enabled(setting=None):
    """Whether to tier: ``setting`` (a function's ``tiered=``) if given, else the environment."""
    if setting is not None:
        return bool(setting)
    return os.environ.get(TIERED_VARIABLE, "").strip().lower() not in ("0", "false", "no", "off")


_machine_code_loaded = threading.Event()  # set once a background compile or load has ended well


def in_disk_cache(source, name):
    """Whether numba's disk cache has files for this source."""
    folder, persistent = cache_location()
    return persistent and bool(numba_cache_files(folder / module_file_name(source, name, NUMBA)[0]))


def loads_quickly(source, name):
    """Whether waiting for numba's machine code of this source costs milliseconds: its disk
    cache holds the code and numba's start is paid (this process has loaded machine code)."""
    return _machine_code_loaded.is_set() and in_disk_cache(source, name)


def load_tiered(python_source, source, name, options=None, hand_over=False, written=()):
    """The ``TieredFunction`` running ``python_source``'s function ``name`` as Python while
    numba compiles ``source``'s (the same function, its array statements fused into loops that
    would crawl in Python) with ``numba.njit`` ``options``; one per source and cache folder.
    ``hand_over``: the Python's loops stop a run once the machine code is ready, and the call
    runs as machine code (``handover.py``; legal only for code that touches no tape it was
    given), after the arguments at the positions ``written`` are put back as they came."""
    key = (source, name, cache_location()[0])
    with _lock:
        tiered = _tiered.get(key)
        if tiered is None:
            if hand_over:
                python_source = with_handover_checks(python_source, name)
            tiered = _tiered[key] = TieredFunction(load(python_source, name, PYTHON), source, name, options,
                                                   hand_over, WrittenArguments(written), in_disk_cache(source, name))
            if hand_over:
                install_checks(tiered.python_function.py_func.__globals__, lambda: tiered.machine_code is not None)
        return tiered


def _restart_compiles_in_forked_child():
    """A forked process has none of its parent's threads: compiles still running there start
    again at the child's next call instead of being waited for forever."""
    for tiered in _tiered.values():
        if not tiered.done.is_set():
            tiered._started = False
            tiered._start_lock = threading.Lock()


os.register_at_fork(after_in_child=_restart_compiles_in_forked_child)


class TieredFunction:
    """Calls the generated Python until numba's machine code is ready, then the machine code."""

    def __init__(self, python_function, source, name, options=None, hand_over=False, written=WrittenArguments(()),
                 cached=False):
        self.python_function = python_function
        self.cached = cached  # numba's disk cache held the code: the background thread loads it
        self.hands_over = hand_over  # the Python's loops stop once the machine code is ready
        self.written = written  # the arguments a stopped run puts back
        self.source, self.name, self.options = source, name, options
        self.dispatcher = None  # numba's dispatcher of the source, made by the compiling thread
        self.machine_code = None  # the dispatcher, once compiled for the first call's types
        self.error = None  # numba's exception, raised again at each call
        self._error_traceback = None
        self.done = threading.Event()  # set when the background compile has ended, either way
        self.first_arguments = None  # the arguments compiled for, kept while the compile runs
        self.last_tier = None
        self._started = False
        self._start_lock = threading.Lock()

    @property
    def py_func(self):
        """The Python function of the code that ran (as numba's dispatchers name it): the file
        whose lines an error's traceback or numba's message point into."""
        if self.dispatcher is not None and (self.machine_code is not None or self.error is not None):
            return self.dispatcher.py_func
        return self.python_function.py_func  # (loader.load's Python functions name theirs)

    def __call__(self, *args):
        machine_code = self.machine_code
        if machine_code is not None:
            self.last_tier = NUMBA
            return machine_code(*args)
        if self.error is not None:
            raise self.error.with_traceback(self._error_traceback)
        if not self._started:
            self._start(args)
        self.last_tier = PYTHON
        if not self.hands_over:
            return self.python_function(*args)
        saved = self.written.saved(args)
        try:
            return self.python_function(*args)
        except MachineCodeReady:  # the run stopped: put back what it wrote, the machine code runs it
            self.written.restore(saved)
        self.last_tier = NUMBA
        return self.machine_code(*args)

    def _start(self, args):
        with self._start_lock:
            if self._started:
                return
            self._started = True
            self.first_arguments = args
        if not self.cached:  # finished in a detached process if this one exits first
            finish_compiles.register(self)
        threading.Thread(target=self._compile, args=(args,), name=f"adcompile numba: {self.name}",
                         daemon=True).start()

    def _compile(self, args):
        try:
            finish_compiles.wait_for_detached_compile(self.source, self.name)  # then numba loads its machine code
            self.dispatcher = load(self.source, self.name, NUMBA, self.options)
            compile_for(self.dispatcher, args)
            self.machine_code = self.dispatcher
            _machine_code_loaded.set()
        except OSError as error:  # the machine, not the code (a full disk): the Python tier goes on
            warn_unwritable(cache_dir(), error)
        except BaseException as error:  # noqa: B036  (whatever stopped numba reaches the next call)
            self._error_traceback = error.__traceback__
            self.error = error
        finally:
            self.first_arguments = None  # (before done: see unfinished_compile)
            self.done.set()

    @property
    def stats(self):
        """numba's statistics of the machine code (its disk cache's hits and misses per
        signature), once the background compile or load has ended."""
        self.tier(wait=True)
        return None if self.dispatcher is None else self.dispatcher.stats  # (None before the first call)

    def unfinished_compile(self):
        """``(source, name, numba options, numba types of the arguments)`` of the background
        compile while it runs, else None: what another process needs to finish it."""
        arguments = self.first_arguments  # read before done: the compile clears it first
        if arguments is None or self.done.is_set():
            return None
        return self.source, self.name, self.options, numba_types(arguments)

    def tier(self, wait=False):
        """Which code ran the last call ("numba", or "python" while numba compiled), or before
        any call, which code the next runs. ``wait``: wait for the background compile to end and
        tell which code the next call runs: "numba", or numba's error raised."""
        if wait:
            if self._started:
                self.done.wait()
            if self.error is not None:
                raise self.error.with_traceback(self._error_traceback)
        elif self.last_tier is not None:
            return self.last_tier
        return NUMBA if self.machine_code is not None else PYTHON


def compile_for(dispatcher, args):
    """numba's machine code of ``dispatcher`` for the types of ``args`` (as a call would type them)."""
    if hasattr(dispatcher, "compile"):  # not NUMBA_DISABLE_JIT=1, where numba returns the function itself
        dispatcher.compile(numba_types(args))


def numba_types(args):
    """The numba types of ``args``, as a call would type them."""
    import numba  # lazy: the compiling thread imports it

    return tuple(numba.typeof(arg) for arg in args)
