"""One SGD training step of a 784-256-10 MLP (ReLU, softmax cross entropy), batch 128:
``adcompile.train_step`` (forward, backward and update in one numba call) against the
PyTorch-style loop in adcompile (``backward`` + ``step``), a hand-written numpy step, and
PyTorch's ``optim.SGD`` step if torch is installed
(model, loss and numpy step are the suite's, ``workloads/mlp.py``; ``run.py --only mlp`` times
them one after another instead of interleaved). Median of repeated calls, compilation
excluded; the minimum is printed too (on a shared machine it is the steadier figure). Run:
``python benchmarks/bench_mlp_step.py [--threads N]`` (N BLAS threads for numpy, numba and
torch alike; default: the libraries' defaults, torch 2)."""
import os
import statistics
import sys
import time

THREADS = None
if "--threads" in sys.argv:  # before numpy is imported: BLAS reads these at load time
    THREADS = int(sys.argv[sys.argv.index("--threads") + 1])
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(THREADS)

import numpy as np  # noqa: E402

import adcompile  # noqa: E402
from workloads.mlp import LEARNING_RATE as LR, MLP, loss_fn, numpy_step  # noqa: E402

BATCH, SIZES, REPEATS = 128, (784, 256, 10), 200


def interleaved_times(steps, repeats=REPEATS):
    """(median, minimum) per step over ``repeats`` rounds that call each step once in turn,
    after 5 warm-up rounds: on a shared machine every variant sees the same load."""
    for _ in range(5):
        for step in steps.values():
            step()
    times = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            start = time.perf_counter()
            step()
            times[name].append(time.perf_counter() - start)
    return {name: (statistics.median(values), min(values)) for name, values in times.items()}


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, SIZES[0]))
    y = rng.integers(0, SIZES[2], size=BATCH)
    adcompile.modules.init.manual_seed(0)
    model = MLP(SIZES)
    optimizer = adcompile.optim.SGD(model.parameters(), lr=LR)
    step = adcompile.train_step(loss_fn, model, optimizer)
    steps = {"adcompile.train_step": lambda: step(x, y)}
    adcompile.modules.init.manual_seed(0)
    loop_model = MLP(SIZES)
    loop_optimizer = adcompile.optim.SGD(loop_model.parameters(), lr=LR)

    def loop_step():
        loop_optimizer.zero_grad()
        adcompile.backward(loss_fn, loop_model, x, y)
        loop_optimizer.step()
    steps["adcompile backward + step"] = loop_step
    params = [p.data.copy() for p in model.parameters()]
    steps["hand-written numpy"] = lambda: numpy_step(params, x, y)
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(THREADS or 2)
        net = torch.nn.Sequential(torch.nn.Linear(*SIZES[:2]), torch.nn.ReLU(), torch.nn.Linear(*SIZES[1:])).double()
        opt = torch.optim.SGD(net.parameters(), lr=LR)
        tx, ty = torch.tensor(x), torch.tensor(y)

        def torch_step():
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(tx), ty)
            loss.backward()
            opt.step()
        steps[f"PyTorch {torch.__version__} (optim.SGD)"] = torch_step
    results = interleaved_times(steps)
    base = results["adcompile.train_step"][0]
    threads = f"{THREADS} BLAS thread(s)" if THREADS else "default threads"
    print(f"MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, float64, SGD step, {threads} "
          f"(median and minimum of {REPEATS} interleaved rounds):")
    for name, (median, minimum) in results.items():
        print(f"  {name:32s} {median * 1e3:7.3f} ms   min {minimum * 1e3:7.3f} ms   "
              f"({median / base:.2f}x train_step)")
    return results


if __name__ == "__main__":
    main()
