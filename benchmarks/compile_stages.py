"""Where a first call's time goes: adcompile's own work, numba's typing, numba's lowering and
LLVM, and the rest (numba's other passes, cache loads), in CPU seconds, cold and warm.

    python benchmarks/compile_stages.py [WORKLOAD ...]     # default: every workload below
    python benchmarks/compile_stages.py --child WORKLOAD   # one measurement (what the parent runs)

Each workload's first call runs in a new process, with ``ADCOMPILE_TIERED=0`` (the first call
waits for numba, so the whole compile is in it): once with a fresh cache folder (cold) and once
more with the same folder (warm: numba loads the machine code). numba's event API
(``numba.core.event``) times its compiler passes; a pass's time excludes the passes of the
compilations nested in it (the runtime helpers typed at their call sites), which count under
their own pass names. "adcompile" is the call's CPU time outside numba's compilations.

"of which LLVM" is the part of lowering spent in LLVM's optimisation and machine-code generation
(numba's ``CPUCodeLibrary`` optimising functions and modules and finishing them).

Workloads (the programs issue reports measured): ``gmm_loops``, the GMM log-likelihood
gradient written with loops as the AD benchmark suites write it; ``sinkhorn``, a log-domain
Sinkhorn gradient (logsumexp along an axis in a loop); ``spring``, a damped spring's gradient
through 1000 scalar steps; ``mlp_fit`` and ``cnn_fit``, one epoch of ``adcompile.fit`` of the
digits examples' MLP and CNN; ``random_hessian``, the Hessian of random program 45000016 (two
parts of 250 lines, 27 loops); ``slow_hessian``, the Hessian of random program 69000072, whose
compile the random-program profile stops at 300 CPU-seconds.
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPOSITORY = os.path.dirname(HERE)
EXAMPLES = os.path.join(REPOSITORY, "examples")

# numba's pass names (an event names "nopython_type_inference [function]")
TYPING = {"nopython_type_inference", "partial_type_inference", "nopython_rewrites", "annotate_types"}
LOWERING = {"native_lowering", "native_parfor_lowering"}


def gmm_loops():
    import adcompile
    import gmm_loop_form

    g = adcompile.grad(adcompile.compile(gmm_loop_form.gmm), wrt=(0, 1, 2))
    args = gmm_loop_form.arguments()
    return lambda: g(*args)


def sinkhorn():
    import numpy as np
    import adcompile

    @adcompile.compile
    def sinkhorn_cost(C, a, b, eps, iterations):
        f = np.zeros(a.shape[0])
        g = np.zeros(b.shape[0])
        for _ in range(iterations):
            M = (f[:, None] + g[None, :] - C) / eps
            m = np.max(M, axis=1, keepdims=True)
            f = eps * np.log(a) - eps * (m[:, 0] + np.log(np.sum(np.exp(M - m), axis=1))) + f
            M = (f[:, None] + g[None, :] - C) / eps
            m = np.max(M, axis=0, keepdims=True)
            g = eps * np.log(b) - eps * (m[0] + np.log(np.sum(np.exp(M - m), axis=0))) + g
        return np.sum(f * a) + np.sum(g * b)

    rng = np.random.default_rng(0)
    C = rng.random((30, 40))
    args = (C, np.full(30, 1 / 30), np.full(40, 1 / 40), 0.1, 20)
    g = adcompile.grad(sinkhorn_cost, wrt=0)
    return lambda: g(*args)


def spring():
    import numpy as np
    import adcompile

    @adcompile.compile
    def final_position(k, c):
        x, v = 1.0, 0.0
        for _ in range(1000):
            a = -k * x - c * v
            v = v + 0.01 * a
            x = x + 0.01 * v
        return x

    g = adcompile.grad(final_position, wrt=(0, 1))
    return lambda: g(np.float64(2.0), np.float64(0.3))


def _random_program(seed):
    """Random program ``seed`` of the tests' generator, imported from a file whose path and
    module name are the same in every process (as a user's file is), so that the warm run can
    load its machine code; and its arguments."""
    sys.path.insert(0, os.path.join(REPOSITORY, "tests"))
    import importlib.util
    from randprog.generator import generate

    program = generate(seed)
    name = f"random_program_{seed}"
    path = os.path.join(tempfile.gettempdir(), name + ".py")
    with open(path, "w") as handle:
        handle.write(program.source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, program.args


def random_hessian():
    import adcompile
    module, args = _random_program(45000016)
    h = adcompile.hessian(adcompile.compile(module.f), wrt=1)
    return lambda: h(*args)


def slow_hessian():
    """The Hessian of random program 69000072 (31 lines; two parts of 252 and 356 lines, 9
    loops, nests 3 deep): minutes in numba's typing and LLVM's optimisation of the module."""
    import adcompile
    module, args = _random_program(69000072)
    h = adcompile.hessian(adcompile.compile(module.f), wrt=0)
    return lambda: h(*args)


def _fit_epoch(module_name, model_name, load_name):
    sys.path.insert(0, EXAMPLES)
    import adcompile
    example = __import__(module_name)
    X_train, _, y_train, _ = getattr(example, load_name)()
    adcompile.modules.init.manual_seed(0)
    model = getattr(example, model_name)().compile("numba")
    optimizer = adcompile.optim.Adam(model.parameters(), lr=1e-3)
    return lambda: adcompile.fit(example.loss_fn, model, optimizer, X_train, y_train, epochs=1, batch_size=32,
                                 progress=False)


def mlp_fit():
    return _fit_epoch("train_digits", "MLP", "load_digits_split")


def cnn_fit():
    return _fit_epoch("cnn_digits", "DigitsCNN", "load_image_split")


WORKLOADS = {"gmm_loops": gmm_loops, "sinkhorn": sinkhorn, "spring": spring, "mlp_fit": mlp_fit,
             "cnn_fit": cnn_fit, "random_hessian": random_hessian, "slow_hessian": slow_hessian}


class PassTimes:
    """CPU seconds per numba pass, each excluding the passes nested in it."""

    def __init__(self):
        self.seconds, self.stack, self.compiling = {}, [], 0.0
        self.compile_depth, self.compile_start = 0, 0.0
        self.llvm, self.llvm_depth = 0.0, 0

    def timing_llvm(self, method):
        """``method`` of numba's code library, its CPU time added to ``llvm`` (outermost calls)."""
        def timed(*args, **kwargs):
            self.llvm_depth += 1
            start = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.llvm_depth -= 1
                if self.llvm_depth == 0:
                    self.llvm += time.process_time() - start
        return timed

    def on_pass(self, event):
        now = time.process_time()
        if event.is_start:
            self.stack.append([event.data["name"], now, 0.0])
            return
        name, start, nested = self.stack.pop()
        spent = now - start
        name = name.split(" [")[0]
        self.seconds[name] = self.seconds.get(name, 0.0) + spent - nested
        if self.stack:
            self.stack[-1][2] += spent

    def on_compile(self, event):
        now = time.process_time()
        if event.is_start:
            self.compile_depth += 1
            if self.compile_depth == 1:
                self.compile_start = now
        else:
            self.compile_depth -= 1
            if self.compile_depth == 0:
                self.compiling += now - self.compile_start


def child(workload):
    os.environ["ADCOMPILE_TIERED"] = "0"
    from numba.core import codegen, event

    call = WORKLOADS[workload]()
    times = PassTimes()
    for name in ("_optimize_functions", "_optimize_final_module", "_finalize_final_module"):
        setattr(codegen.CPUCodeLibrary, name, times.timing_llvm(getattr(codegen.CPUCodeLibrary, name)))
    event.register("numba:run_pass", _Listener(times.on_pass))
    event.register("numba:compile", _Listener(times.on_compile))
    start = time.process_time()
    call()
    total = time.process_time() - start
    typing = sum(s for name, s in times.seconds.items() if name in TYPING)
    lowering = sum(s for name, s in times.seconds.items() if name in LOWERING)
    print(json.dumps({"total": total, "adcompile": total - times.compiling, "numba typing": typing,
                      "numba lowering + LLVM": lowering,
                      "of which LLVM": times.llvm,
                      "numba other": times.compiling - typing - lowering}))


def _Listener(callback):
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, event):
            callback(event)

        def on_end(self, event):
            callback(event)
    return Listener()


def measure(workload, cache_dir):
    env = dict(os.environ, ADCOMPILE_CACHE_DIR=cache_dir, ADCOMPILE_TIERED="0")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (REPOSITORY, env.get("PYTHONPATH")) if p)
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", workload], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{workload} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(workloads):
    columns = ["total", "adcompile", "numba typing", "numba lowering + LLVM", "of which LLVM", "numba other"]
    print("| workload | cache | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    for workload in workloads:
        cache_dir = tempfile.mkdtemp(prefix=f"adcompile_stages_{workload}_")
        for label in ("cold", "warm"):
            row = measure(workload, cache_dir)
            print(f"| {workload} | {label} | " + " | ".join(f"{row[c]:.2f}" for c in columns) + " |", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2])
    else:
        main(sys.argv[1:] or list(WORKLOADS))
