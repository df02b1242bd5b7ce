"""One SGD training step of a 784-256-10 MLP (ReLU, softmax cross entropy), batch 128:
``adcompile.train_step`` (forward, backward and update in one numba call) against the
PyTorch-style loop in adcompile (``backward`` + ``step``), a hand-written numpy step, and
PyTorch's ``optim.SGD`` step if torch is installed. Median of repeated calls, compilation
excluded. Run: ``python benchmarks/bench_mlp_step.py``."""
import statistics
import time

import numpy as np

import adcompile
from adcompile import nn
import adcompile.nn.functional as F

BATCH, SIZES, LR, REPEATS = 128, (784, 256, 10), 0.01, 200


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(SIZES[0], SIZES[1])
        self.fc2 = nn.Linear(SIZES[1], SIZES[2])

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


def loss_fn(model, x, y):
    return F.cross_entropy(model(x), y)


def median_time(step, repeats=REPEATS):
    for _ in range(5):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def numpy_step(params, x, y):
    w1, b1, w2, b2 = params
    h_pre = x @ w1.T + b1
    h = np.maximum(h_pre, 0.0)
    logits = h @ w2.T + b2
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = np.exp(shifted)
    probs /= probs.sum(axis=1, keepdims=True)
    n = x.shape[0]
    loss = -np.mean(np.log(probs[np.arange(n), y]))
    d_logits = probs
    d_logits[np.arange(n), y] -= 1.0
    d_logits /= n
    d_h = d_logits @ w2
    d_h[h_pre <= 0] = 0.0
    w2 -= LR * (d_logits.T @ h)
    b2 -= LR * d_logits.sum(axis=0)
    w1 -= LR * (d_h.T @ x)
    b1 -= LR * d_h.sum(axis=0)
    return loss


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH, SIZES[0]))
    y = rng.integers(0, SIZES[2], size=BATCH)
    adcompile.init.manual_seed(0)
    model = MLP()
    optimizer = adcompile.optim.SGD(model.parameters(), lr=LR)
    step = adcompile.train_step(loss_fn, model, optimizer)
    results = {"adcompile.train_step": median_time(lambda: step(x, y))}

    def loop_step():
        optimizer.zero_grad()
        adcompile.backward(loss_fn, model, x, y)
        optimizer.step()
    results["adcompile backward + step"] = median_time(loop_step)
    params = [p.data.copy() for p in model.parameters()]
    results["hand-written numpy"] = median_time(lambda: numpy_step(params, x, y))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(2)
        net = torch.nn.Sequential(torch.nn.Linear(*SIZES[:2]), torch.nn.ReLU(), torch.nn.Linear(*SIZES[1:])).double()
        opt = torch.optim.SGD(net.parameters(), lr=LR)
        tx, ty = torch.tensor(x), torch.tensor(y)

        def torch_step():
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(net(tx), ty)
            loss.backward()
            opt.step()
        results[f"PyTorch {torch.__version__} (optim.SGD)"] = median_time(torch_step)
    base = results["adcompile.train_step"]
    print(f"MLP {'-'.join(map(str, SIZES))}, batch {BATCH}, float64, SGD step (median of {REPEATS}):")
    for name, seconds in results.items():
        print(f"  {name:32s} {seconds * 1e3:7.3f} ms   ({seconds / base:.2f}x train_step)")
    return results


if __name__ == "__main__":
    main()
