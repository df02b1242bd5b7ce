"""``compile`` and ``CompiledFunction``: the user's Python function, compiled per signature."""
import inspect
import linecache

import numpy as np

from ..backend.loader import BACKENDS
from ..errors import CallError, Location, SourceUnavailableError, UnsupportedSyntaxError, located
from ..frontend.parse import translate
from ..frontend.source import function_name
from ..custom.rules import is_custom_rule
from .specialised import Specialised


class CompiledFunction(Specialised):
    """``@adcompile.compile``: calling it runs the compiled forward function."""

    def __init__(self, pyfunc, backend="numba", tiered=None, fuse=None, parallel=False, boundscheck=True,
                 static_argnums=(), static_argnames=()):
        super().__init__()
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
        self.called_rule = pyfunc if is_custom_rule(pyfunc) else None  # a custom_vjp/custom_jvp function
        pyfunc = pyfunc.fun if self.called_rule is not None else pyfunc
        _reject_async(pyfunc)
        self.pyfunc = pyfunc
        self.backend = backend
        self.tiered = tiered
        self.fuse, self.parallel = fuse, parallel
        self._boundscheck = bool(boundscheck)
        self.name = function_name(pyfunc)  # a lambda's: the name it is assigned to, or lambda_<line>
        self.param_names = list(inspect.signature(pyfunc).parameters)
        self.static_positions = static_positions(self.name, self.param_names, static_argnums, static_argnames)
        self._ir = {}
        self.__doc__ = pyfunc.__doc__
        self.__wrapped__ = pyfunc

    @property
    def __adcompile_python__(self):
        return self.pyfunc

    def origin(self):
        return f"{self.pyfunc.__module__}.{self.pyfunc.__qualname__}"

    def check_arity(self, args):
        if len(args) != len(self.param_names):
            raise CallError(f"{self.name}() takes {len(self.param_names)} arguments "
                            f"({', '.join(self.param_names)}) but {len(args)} were given")

    def primal_ir(self, sig):
        if sig not in self._ir:
            with self._lock:
                if sig not in self._ir:
                    self._ir[sig] = translate(self.pyfunc, list(sig), called_rule=self.called_rule)
        return self._ir[sig]

    ir = primal_ir

    def invoke(self, args, kwargs):
        if kwargs or len(args) != len(self.param_names):
            args = self.call_arguments(args, kwargs)
        return self.run(args)

    def python_function(self):
        return self.pyfunc

    def user_python_call(self, args):
        return self.pyfunc, args[:len(self.param_names)]

    def user_returns_tuple(self, sig):
        return self.primal_ir(sig).returns_tuple

    def __repr__(self):
        return f"<adcompile.compile {self.name}>"


def static_positions(name, param_names, argnums, argnames):
    """The sorted positions of the static arguments named by ``static_argnums``/``static_argnames``."""
    argnums = (argnums,) if isinstance(argnums, (int, np.integer)) else tuple(argnums or ())
    argnames = (argnames,) if isinstance(argnames, str) else tuple(argnames or ())
    positions = set()
    for k in argnums:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not -len(param_names) <= k < len(param_names):
            raise CallError(f"compile({name}): static_argnums={k!r} is not the position of one of its arguments "
                            f"({', '.join(param_names)})")
        positions.add(int(k) % len(param_names))
    for argname in argnames:
        if argname not in param_names:
            raise CallError(f"compile({name}): static_argnames={argname!r} names no argument of it "
                            f"({', '.join(param_names)})")
        positions.add(param_names.index(argname))
    return tuple(sorted(positions))


def _reject_async(pyfunc):
    """An ``async def`` function returns a coroutine in Python: refuse it at its ``def`` line
    rather than compile it into something that returns a number. (``yield`` is rejected by the
    frontend, at the ``yield``.)"""
    if not (inspect.iscoroutinefunction(pyfunc) or inspect.isasyncgenfunction(pyfunc)):
        return
    code = pyfunc.__code__
    line = linecache.getline(code.co_filename, code.co_firstlineno).rstrip("\n")
    location = Location(code.co_filename, code.co_firstlineno, None, line) if line else None
    raise located(UnsupportedSyntaxError, "async def is not supported by adcompile", location)


def as_compiled(f):
    if isinstance(f, Specialised):
        return f
    if callable(f) and (hasattr(f, "__code__") or is_custom_rule(f)):
        return CompiledFunction(f)
    if isinstance(getattr(f, "derived", None), Specialised):  # the pullback of vjp
        raise CallError(f"{f!r} holds the values of one forward pass, so it is not a function to "
                        "differentiate; differentiate the function itself (adcompile.vjp, grad or "
                        "jacobian of it: every transform applies to every derived function)")
    if callable(f):
        name = getattr(f, "__name__", type(f).__name__)
        from_numpy = isinstance(f, np.ufunc) or str(getattr(f, "__module__", "")).startswith("numpy")
        name = f"np.{name}" if from_numpy else name
        raise SourceUnavailableError(
            f"{name} is a {type(f).__name__}, not a Python function, so it has no Python source for "
            f"adcompile to differentiate; wrap it in a function, e.g. def f(x): return {name}(x)")
    raise CallError(f"expected a Python function or an adcompile function, got {type(f).__name__}")

def compile(fn=None, *, backend="numba", tiered=None, fuse=None, parallel=False, boundscheck=True,
            static_argnums=(), static_argnames=()):
    """Decorator: compile ``fn`` with numba (``backend='python'`` runs the generated Python).

    Nothing is compiled before the first call; code is generated per argument signature
    (dtype and ndim of each argument). Keywords and defaults bind as in Python. With numba,
    the first calls run the generated Python while numba compiles in the background (a run
    of loops still going when the machine code is ready stops, puts back the arguments it
    wrote into, and runs as machine code), ``fn.tier()`` says which ran; ``tiered=False`` (or the environment
    variable ``ADCOMPILE_TIERED=0``) makes the first call wait for numba instead. For numba,
    runs of array statements over one shape are fused into explicit loops (``fuse=False``,
    or ``ADCOMPILE_FUSE=0``, keeps one numpy call per statement); ``parallel=True`` runs
    fused loops without a loop-carried dependence with ``numba.prange``. numba checks every
    index of the user's code, as numpy does (an out-of-range ``x[i]`` raises ``IndexError``
    naming the line); code that indexes no array by integers (array code, whose only
    element indices are the fused loops' own) compiles without checks, its generated file
    saying so; ``boundscheck=False`` drops the checks everywhere, for speed, where the indices
    are known to be in range (an index out of range then reads or writes whatever memory is
    there). Functions derived from ``fn`` (``grad``, ``hessian`` ...) inherit these options.
    ``static_argnums`` / ``static_argnames`` (ints / names, as in ``jax.jit``) name arguments
    whose values are compile-time constants (a string choosing a branch, a tuple of sizes):
    hashable values, one specialisation per value, skipped by derivatives.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")  # without backend=, numba compiles the generated code
    ... def energy(x, k=0.5):
    ...     return k * np.sum(x ** 2)
    >>> float(energy(np.array([1.0, 2.0])))
    2.5
    >>> float(energy(np.array([1.0, 2.0]), k=2.0))
    10.0
    >>> text = adcompile.source(energy)  # the generated Python of the last call
    >>> print(text[text.index("def energy"):])
    def energy(x, k):
        return k * np.sum(x * x)
    <BLANKLINE>
    """
    options = dict(backend=backend, tiered=tiered, fuse=fuse, parallel=parallel, boundscheck=boundscheck,
                   static_argnums=static_argnums, static_argnames=static_argnames)
    if fn is None:
        return lambda f: CompiledFunction(f, **options)
    return CompiledFunction(fn, **options)

