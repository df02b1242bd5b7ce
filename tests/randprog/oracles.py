"""Oracles for one generated program.

``check_program(program, mode)`` returns an ``Outcome`` (``mode``: "python", "lowered" or
"numba", ``modes.py``):

- ``passed``: every oracle agreed;
- ``rejected``: adcompile raised an ``AdCompileError`` (a documented rejection), kept apart;
- ``discarded``: the program is not a fair test at this point (plain Python raised or gave
  non-finite or huge values, or its finite differences are not self-consistent: a kink);
- ``wrong``: a value or derivative disagrees with its reference;
- ``crash``: adcompile raised anything that is not an ``AdCompileError``, or one of the two
  that report adcompile's own bugs (``GeneratedCodeError``, ``InternalError``), or a
  ``ShapeError`` from a derived function of a program whose compiled forward ran (numpy and
  adcompile agreed on its shapes: a derivative's follow from them).

A float32 program (its array arguments in float32) is compared with the same program run in
float64 on the widened arguments, to float32 tolerances (``numerics.py``), first order only.

Oracles: (a) the compiled forward (result and any writes into arguments) equals plain
Python; (b) reverse mode (value_and_grad, grad, or vjp for array/tuple results) equals central
finite differences and forward mode (<grad, v> == jvp in two random directions); derived
functions leave their arguments unchanged; (c) with ``compare_backends`` the run in ``mode`` equals
the generated source run as plain Python without the lowering (``fuse=False``); (d) with
``second_order``: hvp against finite differences of the gradient, and hessian against hvp
columns (``quick``: the first order with grad only, not value_and_grad, and one jvp
direction: fewer numba compiles); (e) with ``jacobian_fwd``: ``jacobian(mode="fwd")`` (batched tangents) against the
checked reverse-mode result; (f) with ``third_order``: compositions of three transforms
(``higher_order.py``).
"""
import signal
import traceback
import warnings
from dataclasses import dataclass

import numpy as np

import adcompile

from .higher_order import composition_checks, jacobian_fwd_check, wrapper_source
from .loading import load_module, unload_module
from .modes import backend_of, lowering
from .numerics import (ATOL, EXACT_ATOL, EXACT_RTOL, FD_CHECK_STEP, FD_STEP, RTOL, SINGLE_ATOL, SINGLE_RTOL,
                       as_list, central_gradient, close, fresh, inner, perturbed, random_direction, widened,
                       worst)


@dataclass
class Outcome:
    status: str  # passed, rejected, discarded, wrong, crash, timeout
    kind: str = ""  # e.g. "wrong:grad-vs-fd", "crash:grad:NameError"
    detail: str = ""

    @property
    def failed(self):
        return self.status in ("wrong", "crash", "timeout")


class Stop(Exception):
    """Ends the checks of a program with an outcome."""

    def __init__(self, outcome):
        super().__init__(outcome.kind)
        self.outcome = outcome


def wrong(kind, detail):
    raise Stop(Outcome("wrong", "wrong:" + kind, detail))


class ProgramCheck:
    def __init__(self, program, module, mode, second_order, compare_backends, jacobian_fwd=False,
                 third_order=None, quick=False):
        self.program = program
        self.module = module
        self.f = module.f
        self.args = program.args
        self.single = program.dtype == "float32"  # float32 arrays: compared with the float64 reference
        self.reference_args = widened(self.args)
        self.indices = program.float_arg_indices
        self.mode = mode
        self.backend = backend_of(mode)
        self.second_order = second_order and program.returns == "scalar" and not self.single
        self.jacobian_fwd = jacobian_fwd and program.returns != "tuple"
        self.third_order = third_order if program.returns == "scalar" and not self.single else None
        self.compare_backends = compare_backends
        self.rng = np.random.default_rng(program.seed + 1)
        self.scalar = program.returns == "scalar"
        self.forward_ran = False  # the compiled forward gave the right result
        self.quick = quick  # fewer derived functions: grad only (not value_and_grad), one jvp direction

    # ------------------------------------------------------------------ helpers
    def wrong(self, kind, detail):
        wrong(kind, detail)

    def adcompile_call(self, stage, fn, *call_args):
        """Call into adcompile; AdCompileError -> rejected, except the two that report adcompile's
        own bugs (GeneratedCodeError, InternalError); anything else -> crash."""
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return fn(*call_args)
        except (adcompile.errors.GeneratedCodeError, adcompile.errors.InternalError) as error:
            detail = str(error).strip()  # adcompile's own bug, told as such: a crash, not a rejection
            raise Stop(Outcome("crash", f"crash:{stage}:{type(error).__name__}", detail[:2000]))
        except adcompile.errors.ShapeError as error:
            if not self.forward_ran:
                first = str(error).strip().splitlines()[0]
                raise Stop(Outcome("rejected", f"rejected:{stage}:ShapeError", first))
            # the compiled forward ran on these shapes: a derivative's shapes follow from them
            raise Stop(Outcome("crash", f"crash:{stage}:ShapeError", str(error).strip()[:2000]))
        except adcompile.AdCompileError as error:
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise Stop(Outcome("rejected", f"rejected:{stage}:{type(error).__name__}", first))
        except Stop:
            raise
        except Exception as error:  # noqa: BLE001  (every other exception is a crash)
            detail = "".join(traceback.format_exception_only(type(error), error)).strip()
            raise Stop(Outcome("crash", f"crash:{stage}:{type(error).__name__}", detail[:2000]))

    def same(self):
        """(rtol, atol) of one computation run two ways (or in float32 against float64)."""
        return (SINGLE_RTOL, SINGLE_ATOL * self.scale) if self.single else (EXACT_RTOL, EXACT_ATOL)

    def against_fd(self):
        """(rtol, atol) of a derivative against the finite differences."""
        return (SINGLE_RTOL, SINGLE_ATOL * self.scale) if self.single else (RTOL, ATOL * self.scale)

    def plain(self, *args):
        with np.errstate(all="raise"):
            return self.f(*args)

    def loss(self, *args):
        out = self.plain(*args)
        return float(out) if self.scalar else inner(as_list(out), self.cotangent)

    def derived_call(self, stage, fn, *args):
        """Call a derived function on copies of the arguments; they must stay unchanged."""
        copies = fresh(self.args)
        result = self.adcompile_call(stage, fn, *copies)
        if not close(list(copies), list(self.args), 0.0, 0.0):
            wrong(f"{stage}-mutates-arguments", worst(list(copies), list(self.args)))
        return result

    # ------------------------------------------------------------------ reference
    def reference(self):
        try:
            copies = fresh(self.reference_args)
            out = self.plain(*copies)
        except Exception as error:  # noqa: BLE001
            raise Stop(Outcome("discarded", "discarded:python-error", f"{type(error).__name__}: {error}"))
        values = as_list(out)
        if not all(np.all(np.isfinite(v)) for v in values):
            raise Stop(Outcome("discarded", "discarded:not-finite"))
        if max(float(np.max(np.abs(v), initial=0.0)) for v in values) > 1e4:
            raise Stop(Outcome("discarded", "discarded:too-large"))
        self.out, self.mutated = out, copies
        self.cotangent = [self.rng.standard_normal(v.shape) for v in values]
        self.fd = self.benign_gradient(self.loss)
        self.scale = max(1.0, abs(self.loss(*fresh(self.reference_args))))

    def benign_gradient(self, loss):
        try:
            fine = central_gradient(loss, self.reference_args, self.indices, FD_STEP)
            coarse = central_gradient(loss, self.reference_args, self.indices, FD_CHECK_STEP)
        except Exception as error:  # noqa: BLE001
            raise Stop(Outcome("discarded", "discarded:python-error", f"{type(error).__name__}: {error}"))
        if not close(coarse, fine, RTOL, ATOL):
            raise Stop(Outcome("discarded", "discarded:kink"))
        if max(float(np.max(np.abs(g), initial=0.0)) for g in as_list(tuple(fine)) or [0.0]) > 1e4:
            raise Stop(Outcome("discarded", "discarded:too-large"))
        return fine

    # ------------------------------------------------------------------ oracles
    def forward(self, compiled, stage="forward"):
        copies = fresh(self.args)
        out = self.adcompile_call(stage, compiled, *copies)
        if not close(out, self.out, *self.same()):
            wrong(stage, worst(out, self.out))
        if not close(list(copies), list(self.mutated), *self.same()):
            wrong(stage + "-argument-writes", worst(list(copies), list(self.mutated)))
        return out

    def reverse(self, compiled):
        wrt = self.indices
        if self.scalar and self.quick:  # one reverse-mode function: grad
            grads = self.derived_call("grad", adcompile.grad(compiled, wrt=wrt))
            if not close(list(grads), self.fd, *self.against_fd()):
                wrong("grad-vs-fd", worst(list(grads), self.fd))
        elif self.scalar:
            value, grads = self.derived_call("value_and_grad", adcompile.value_and_grad(compiled, wrt=wrt))
            if not close(value, self.out, *self.same()):
                wrong("value_and_grad-value", worst(value, self.out))
            if not close(list(grads), self.fd, *self.against_fd()):
                wrong("grad-vs-fd", worst(list(grads), self.fd))
            plain_grads = self.derived_call("grad", adcompile.grad(compiled, wrt=wrt))
            if not close(list(plain_grads), list(grads), *self.same()):
                wrong("grad-vs-value_and_grad", worst(list(plain_grads), list(grads)))
        else:
            copies = fresh(self.args)
            out, pullback = self.adcompile_call("vjp", lambda: adcompile.vjp(compiled, *copies, wrt=wrt))
            if not close(out, self.out, *self.same()):
                wrong("vjp-value", worst(out, self.out))
            cot = tuple(self.cotangent) if isinstance(self.out, tuple) else self.cotangent[0]
            grads = self.adcompile_call("vjp-pullback", pullback, cot)
            if len(grads) != len(self.args) or any(grads[k] is not None for k in range(len(self.args))
                                                   if k not in wrt):
                wrong("vjp-one-cotangent-per-primal", f"{len(grads)} cotangents for {len(self.args)} primals")
            grads = tuple(grads[k] for k in wrt)
            if not close(list(copies), list(self.args), 0.0, 0.0):
                wrong("vjp-mutates-arguments", worst(list(copies), list(self.args)))
            if not close(list(grads), self.fd, *self.against_fd()):
                wrong("vjp-vs-fd", worst(list(grads), self.fd))
        return list(grads)

    def forward_mode(self, compiled, grads):
        for _ in range(1 if self.quick else 2):
            direction = random_direction(self.rng, self.args, self.indices)
            tangents = tuple(d.astype(a.dtype) if isinstance(d, np.ndarray) else d
                             for d, a in zip(direction, self.args))
            out, tangent_out = self.derived_call(
                "jvp", lambda *a: adcompile.jvp(compiled, a, tangents), *self.args)
            if not close(out, self.out, *self.same()):
                wrong("jvp-value", worst(out, self.out))
            projected = float(tangent_out) if self.scalar else inner(as_list(tangent_out), self.cotangent)
            expected = inner(grads, [tangents[k] for k in self.indices])
            size = sum(float(np.sum(np.abs(g * tangents[k]))) for g, k in zip(grads, self.indices))
            rtol, atol = self.against_fd()
            if abs(projected - expected) > atol + rtol * max(abs(expected), size):
                wrong("jvp-vs-reverse", f"<J v, c> = {projected!r}, <grad, v> = {expected!r}")

    def hessian_checks(self, compiled):
        wrt = self.indices
        grad_fn = adcompile.grad(compiled, wrt=wrt)
        direction = random_direction(self.rng, self.args, self.indices)
        hv = self.derived_call("hvp", lambda *a: adcompile.hvp(compiled, a, direction), *self.args)
        hv = list(hv) if isinstance(hv, tuple) else [hv]

        def grad_at(step):
            point = perturbed(fresh(self.args), direction, step)
            return [np.asarray(g, dtype=float) for g in self.adcompile_call("grad", grad_fn, *point)]

        fine = [(u - d) / (2 * FD_STEP) for u, d in zip(grad_at(FD_STEP), grad_at(-FD_STEP))]
        coarse = [(u - d) / (2 * FD_CHECK_STEP) for u, d in zip(grad_at(FD_CHECK_STEP), grad_at(-FD_CHECK_STEP))]
        if not close(coarse, fine, RTOL, ATOL):
            return  # the gradient has a kink near the point: no second-order reference here
        grad_scale = max([1.0] + [float(np.max(np.abs(g), initial=0.0)) for g in self.fd])
        if not close(hv, fine, RTOL, ATOL * grad_scale):
            wrong("hvp-vs-fd", worst(hv, fine))
        k = self.rng.choice(wrt)
        hessian = self.derived_call("hessian", adcompile.hessian(compiled, wrt=int(k)), *self.args)
        x = self.args[k]
        columns = []
        for e in range(np.size(x)):
            unit = [None] * len(self.args)
            unit[k] = np.eye(np.size(x))[e].reshape(np.shape(x)) if np.ndim(x) else 1.0
            col = self.derived_call("hvp", lambda *a: adcompile.hvp(compiled, a, tuple(unit)), *self.args)
            columns.append(np.asarray(col, dtype=float).ravel())
        expected = np.stack(columns, axis=-1).reshape(np.shape(x) + np.shape(x))
        if not close(np.asarray(hessian, dtype=float), expected, EXACT_RTOL * 1e3, EXACT_ATOL * 1e3 * grad_scale):
            wrong("hessian-vs-hvp", worst(np.asarray(hessian, dtype=float), expected))

    def backends_agree(self, compiled, grads):
        """The results in this mode equal the same program's source generated without the
        lowering and run as plain Python."""
        python = self.adcompile_call("python-backend",
                                     lambda: adcompile.compile(self.f, backend="python", fuse=False))
        out = self.adcompile_call("python-backend", python, *fresh(self.args))
        numba_out = self.adcompile_call("forward", compiled, *fresh(self.args))
        if not close(numba_out, out, *self.same()):
            wrong("backend-forward", worst(numba_out, out))
        if self.scalar:
            python_grads = self.derived_call("python-backend-grad", adcompile.grad(python, wrt=self.indices))
            rtol, atol = (EXACT_RTOL * 1e2, EXACT_ATOL * self.scale) if not self.single else self.same()
            if not close(list(python_grads), grads, rtol, atol):
                wrong("backend-grad", worst(grads, list(python_grads)))

    def run(self):
        self.reference()
        # untiered whatever the environment says: numba's machine code answers every call (a
        # tiered first call would run the generated Python instead)
        compiled = adcompile.compile(self.f, backend=self.backend, tiered=False)
        self.forward(compiled)
        self.forward_ran = True
        grads = self.reverse(compiled)
        self.forward_mode(compiled, grads)
        if self.compare_backends:
            self.backends_agree(compiled, grads)
        if self.jacobian_fwd:
            jacobian_fwd_check(self, compiled, grads)
        if self.second_order:
            self.hessian_checks(compiled)
        if self.third_order:
            composition_checks(self, compiled, self.third_order)
        return Outcome("passed")


def check_program(program, backend="python", second_order=False, compare_backends=False,
                  jacobian_fwd=False, third_order=None, quick=False):
    """Run every oracle on ``program`` in mode ``backend`` ("python", "lowered" or "numba");
    never raises for adcompile's failures. ``third_order`` names a form of
    ``higher_order.THIRD_ORDER_FORMS`` (its wrapper functions are added to the module)."""
    mode = backend
    source = program.source
    if third_order:
        source += wrapper_source(program, third_order)
    try:
        module = load_module(source)
    except Exception as error:  # noqa: BLE001  (a generator bug: the source does not import)
        return Outcome("discarded", "discarded:import-error", f"{type(error).__name__}: {error}")
    try:
        if not callable(getattr(module, "f", None)):
            return Outcome("discarded", "discarded:no-entry-function")
        with lowering(mode):
            return ProgramCheck(program, module, mode, second_order, compare_backends, jacobian_fwd,
                                third_order, quick).run()
    except Stop as stop:
        return stop.outcome
    except Exception as error:  # noqa: BLE001  (a candidate the harness cannot judge, e.g. while shrinking)
        return Outcome("discarded", "discarded:harness-error", f"{type(error).__name__}: {error}")
    finally:
        unload_module(module)


class Timeout(BaseException):
    """Raised by the alarm in ``check_with_timeout`` (a BaseException: no oracle catches it)."""


def check_with_timeout(program, seconds, *args, **kwargs):
    """``check_program`` that gives up after ``seconds`` of this process's CPU time (a compiler
    hang is a failure; the outcome names the innermost adcompile function that was running).
    CPU time, not wall time: on a machine shared with other work a numba compile may wait."""
    def alarm(signum, frame):
        raise Timeout()

    previous = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return check_program(program, *args, **kwargs)
    except Timeout as error:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if "adcompile" in f.filename]
        where = f"{frames[-1].filename}:{frames[-1].lineno} in {frames[-1].name}" if frames else "?"
        return Outcome("timeout", "timeout", f"no result after {seconds:.0f}s of CPU time; running {where}")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
