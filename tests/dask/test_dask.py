"""adcompile.dask: sharded derivatives and data-parallel training on a real LocalCluster.

One LocalCluster (the ``client`` fixture of conftest.py) serves the module; every wait is
bounded by a timeout so that nothing can hang. Every sharded result is compared with an
independent computation: the single-process compiled derivative of the whole data, or a plain
dask/numpy formula.
Skipped when dask or distributed is not installed.
"""
import concurrent.futures
import os
import signal
import sys
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
import cloudpickle  # noqa: E402  (a dependency of distributed)

import adcompile  # noqa: E402
import adcompile.dask as adask  # noqa: E402
from adcompile import nn  # noqa: E402
import adcompile.nn.functional as F  # noqa: E402
from dask_helpers import TIMEOUT, WORKER_MEMORY, bounded, close  # noqa: E402
from example_files import load_example  # noqa: E402

# the helpers of this module run on the workers: ship them by value (tests/ is not a package)
cloudpickle.register_pickle_by_value(sys.modules[__name__])


# ------------------------------------------------------------------ losses (one block of rows)
@adcompile.compile(backend="python")
def logistic(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    return (m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))).reshape(-1)


@adcompile.compile(backend="python")
def gmm_loglik(alphas, means, icf, x):
    """The ADBench GMM log-likelihood without its prior: a sum over rows (reduce="sum")."""
    n, d = x.shape
    q = np.exp(icf)
    xc = x[:, None, :] - means[None, :, :]
    qx = q[None, :, :] * xc
    main = alphas[None, :] + np.sum(icf, axis=1)[None, :] - 0.5 * np.sum(qx ** 2, axis=-1)
    return np.sum(logsumexp_rows(main)) - n * logsumexp(alphas)


def logistic_data(n=157, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-X @ np.linspace(-1, 1, d)))).astype(np.float64)
    return rng.normal(size=d) * 0.3, X, y


UNEVEN = (40, 1, 77, 2, 37)  # 157 rows


@pytest.mark.parametrize("chunks", [UNEVEN, 1], ids=["uneven", "one-row"])
def test_logistic_value_and_grad_equals_single_process(client, chunks):
    w, X, y = logistic_data()
    expected = adcompile.value_and_grad(logistic)(w, X, y)
    Xd = da.from_array(X, chunks=(chunks, -1))
    yd = da.from_array(y, chunks=(chunks,))
    value, gradient = bounded(adask.value_and_grad(logistic), w, Xd, yd, client=client)
    assert isinstance(gradient, np.ndarray) and gradient.shape == w.shape
    close(value, expected[0])
    close(gradient, expected[1])
    close(bounded(adask.grad(logistic, client=client), w, Xd, yd), expected[1])


@pytest.mark.parametrize("chunks", [(9, 30, 1, 20), 1], ids=["uneven", "one-row"])
def test_gmm_gradient_equals_single_process(client, chunks):
    rng = np.random.default_rng(1)
    k, d, n = 3, 2, 60
    alphas, means, icf = rng.normal(size=k), rng.normal(size=(k, d)), 0.3 * rng.normal(size=(k, d))
    x = rng.normal(size=(n, d))
    expected = adcompile.value_and_grad(gmm_loglik, wrt=(0, 1, 2))(alphas, means, icf, x)
    f = adask.value_and_grad(gmm_loglik, wrt=(0, 1, 2), reduce="sum", client=client)
    value, grads = bounded(f, alphas, means, icf, da.from_array(x, chunks=(chunks, -1)))
    close(value, expected[0])
    close(grads, expected[1])


def test_hvp_equals_single_process(client):
    w, X, y = logistic_data()
    v = np.linspace(-1.0, 2.0, w.size)
    expected = adcompile.hvp(logistic, (w, X, y), (v, None, None))
    actual = bounded(adask.hvp, logistic, (w, da.from_array(X, chunks=(UNEVEN, -1)), da.from_array(y, chunks=UNEVEN)),
                     (v, None, None), client=client)
    close(actual, expected)


@adcompile.compile(backend="python")
def mlp_loss(model, X, labels):
    return F.cross_entropy(model(X), labels)


def test_module_gradient_is_a_dict_equal_to_single_process(client):
    _, X, y = logistic_data()
    labels = y.astype(np.int64)
    adcompile.modules.init.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))
    model.compile("python")
    expected = adcompile.value_and_grad(mlp_loss)(model, X, labels)
    value, grads = bounded(adask.value_and_grad(mlp_loss, client=client), model,
                           da.from_array(X, chunks=(UNEVEN, -1)), da.from_array(labels, chunks=UNEVEN))
    close(value, expected[0])
    close(grads, expected[1])
    tangent = {name: np.ones_like(g) for name, g in expected[1].items()}
    close(bounded(adask.hvp, mlp_loss, (model, da.from_array(X, chunks=(UNEVEN, -1)), labels),
                  (tangent, None, None), client=client),
          adcompile.hvp(mlp_loss, (model, X, labels), (tangent, None, None)))


def test_numpy_data_is_one_chunk_and_mixed_data_is_aligned(client):
    w, X, y = logistic_data()
    expected = adcompile.value_and_grad(logistic)(w, X, y)
    f = adask.value_and_grad(logistic, client=client)
    close(bounded(f, w, X, y), expected)
    close(bounded(f, w, da.from_array(X, chunks=(UNEVEN, 2)), y), expected)  # y rechunked to X's rows


def test_unsupported_reduce_and_mismatched_rows_are_clear_errors():
    with pytest.raises(adcompile.AdCompileError, match="reduce='max' is not supported.*mean over rows"):
        adask.value_and_grad(logistic, reduce="max")
    w, X, y = logistic_data()
    with pytest.raises(adcompile.AdCompileError, match="same, known number of rows"):
        adask.value_and_grad(logistic)(w, da.from_array(X, chunks=(50, -1)), y[:-1])


# ------------------------------------------------------------------ shipping compiled code
def test_function_without_source_is_an_adcompile_error_before_anything_is_sent():
    namespace = {"np": np}
    exec("def loss(w, X):\n    return np.sum(X @ w)\n", namespace)
    with pytest.raises(adcompile.AdCompileError, match="source code is not available"):
        adask.grad(namespace["loss"], reduce="sum")(np.ones(2), da.ones((4, 2), chunks=(2, 2)))


def test_user_module_need_not_exist_on_workers_and_workers_compile_once(client, tmp_path):
    """Only the generated source travels: the loss lives in a module that only the client can
    import (its folder is on no worker's path, and it is deleted after the first call), and a
    second call loads nothing new on the workers."""
    folder = tmp_path / "client_only"
    folder.mkdir()
    (folder / "client_only_loss.py").write_text(
        "import numpy as np\n\ndef loss(w, X):\n    return np.sum(np.tanh(X @ w) ** 2)\n")
    X = np.random.default_rng(2).normal(size=(30, 3))
    w = np.array([0.1, -0.2, 0.3])
    t = np.tanh(X @ w)
    expected = X.T @ (2 * t * (1 - t ** 2))  # by hand
    Xd = da.from_array(X, chunks=(7, -1))

    def loaded():
        from adcompile.backend import loader
        return len(loader._loaded)

    sys.path.insert(0, str(folder))
    try:
        import client_only_loss
        f = adask.grad(adcompile.compile(client_only_loss.loss, backend="python"), reduce="sum", client=client)
        close(bounded(f, w, Xd), expected)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("client_only_loss", None)
        (folder / "client_only_loss.py").unlink()
    before = client.run(loaded)
    close(bounded(f, w, Xd), expected)
    assert client.run(loaded) == before


# ------------------------------------------------------------------ faults and memory
def slow_block(seed, rows, d, delay):
    """A block of generated rows (X then y in the last column) that takes ``delay`` seconds."""
    time.sleep(delay)
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, d))
    y = (rng.random(rows) < 0.5).astype(np.float64)
    return np.concatenate([X, y[:, None]], axis=1)


def test_a_worker_killed_during_a_gradient_gives_the_same_result(client):
    from dask import delayed
    rows, d, count = 50, 4, 10
    blocks = [da.from_delayed(delayed(slow_block)(seed, rows, d, 0.3), shape=(rows, d + 1), dtype=np.float64)
              for seed in range(count)]
    data = da.concatenate(blocks)
    local = np.concatenate([slow_block(seed, rows, d, 0.0) for seed in range(count)])
    w = np.linspace(-0.5, 0.5, d)
    expected = adcompile.value_and_grad(logistic)(w, local[:, :d], local[:, d])
    workers_before = set(client.scheduler_info()["workers"])
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        running = pool.submit(adask.value_and_grad(logistic, client=client), w, data[:, :d], data[:, d])
        deadline = time.monotonic() + TIMEOUT
        while not any(client.processing().values()):  # wait until blocks are being computed
            assert time.monotonic() < deadline, "no task started"
            time.sleep(0.02)
        time.sleep(0.5)
        assert not running.done()
        victim = next(iter(client.scheduler_info()["workers"]))
        os.kill(client.run(os.getpid, workers=[victim])[victim], signal.SIGKILL)
        value, gradient = running.result(timeout=TIMEOUT)
    finally:
        pool.shutdown(wait=False)
    close(value, expected[0])
    close(gradient, expected[1])
    client.wait_for_workers(2, timeout=TIMEOUT)  # the nanny restarted the killed worker
    assert set(client.scheduler_info()["workers"]) != workers_before


def test_data_larger_than_a_worker_memory_limit(client):
    """7e6 x 10 float64 (560 MB) generated on the workers (500 MiB limit each), never gathered;
    compared with the same formula written as plain dask array expressions."""
    n, d, chunk = 7_000_000, 10, 250_000
    assert n * (d + 1) * 8 > WORKER_MEMORY
    rng = da.random.RandomState(3)
    X = rng.normal(size=(n, d), chunks=(chunk, d))
    y = (X[:, 0] - X[:, 1] + rng.normal(size=n, chunks=chunk) > 0).astype(np.float64)
    w = np.linspace(-0.3, 0.3, d)
    workers_before = set(client.scheduler_info()["workers"])
    value, gradient = bounded(adask.value_and_grad(logistic, client=client), w, X, y)
    p = 1.0 / (1.0 + da.exp(-(X @ w)))
    formula = (-da.mean(y * da.log(p) + (1 - y) * da.log(1 - p)), X.T @ (p - y) / n)
    expected_value, expected_gradient = client.compute(formula, sync=False)
    close(value, expected_value.result(timeout=TIMEOUT))
    close(gradient, expected_gradient.result(timeout=TIMEOUT))
    assert set(client.scheduler_info()["workers"]) == workers_before  # no worker died of memory


# ------------------------------------------------------------------ data-parallel fit
@adcompile.compile(backend="python")
def digits_loss(model, X, labels):
    return F.cross_entropy(model(X), labels)


def digits_model():
    adcompile.modules.init.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Linear(32, 10))
    model.compile("python")
    return model, adcompile.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)


@pytest.fixture(scope="module")
def digits():
    datasets = pytest.importorskip("sklearn.datasets")
    data = datasets.load_digits()
    X, y = data.data / 16.0, data.target.astype(np.int64)
    return X[:1400], y[:1400], X[1400:], y[1400:]


@pytest.fixture(scope="module")
def single_machine(digits):
    X, y, X_test, y_test = digits
    model, opt = digits_model()
    history = adcompile.fit(digits_loss, model, opt, X, y, epochs=3, batch_size=64, progress=False)
    return model, history


def accuracy(model, X, y):
    return float(np.mean(np.argmax(model(X), axis=1) == y))


def digits_blocks(digits, rows=300):
    X, y, _, _ = digits
    return da.from_array(X, chunks=(rows, -1)), da.from_array(y, chunks=rows)


@pytest.fixture(scope="module")
def synchronous_two_workers(client, digits):
    model, opt = digits_model()
    history = adask.fit(digits_loss, model, opt, *digits_blocks(digits), epochs=3, batch_size=64, client=client,
                        timeout=TIMEOUT)
    return model, opt, history


def test_fit_on_two_workers_reaches_the_single_machine_accuracy(digits, single_machine, synchronous_two_workers):
    X, y, X_test, y_test = digits
    model, opt, history = synchronous_two_workers
    reference, reference_history = single_machine
    assert accuracy(reference, X_test, y_test) > 0.85
    assert accuracy(model, X_test, y_test) == accuracy(reference, X_test, y_test)
    close(history, reference_history, rtol=1e-10)
    assert len(opt.state) == len(list(model.parameters()))  # the optimizer's state was updated in place



def test_fit_with_validation_and_a_scheduler_equals_fit(client, digits):
    X, y, X_test, y_test = digits
    histories, models = [], []
    for distributed_fit in (True, False):
        model, opt = digits_model()
        scheduler = adcompile.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
        options = dict(epochs=2, batch_size=64, validation_data=(X_test, y_test), scheduler=scheduler)
        if distributed_fit:
            history = adask.fit(digits_loss, model, opt, *digits_blocks(digits), client=client, timeout=TIMEOUT,
                                **options)
        else:
            history = adcompile.fit(digits_loss, model, opt, X, y, progress=False, **options)
        histories.append(history)
        models.append(model)
    assert histories[0].lr == histories[1].lr == [0.2, 0.1]
    close(histories[0].val_loss, histories[1].val_loss, rtol=1e-10)
    close(dict(models[0].named_parameters()), dict(models[1].named_parameters()), rtol=1e-10)
    with pytest.raises(adcompile.AdCompileError, match="OneCycleLR steps after each batch"):
        model, opt = digits_model()
        one_cycle = adcompile.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=100)
        adask.fit(digits_loss, model, opt, X, y, scheduler=one_cycle)

def test_fit_broadcasts_the_parameters_once_per_step(client, digits, monkeypatch):
    """Each step scatters the parameters once with broadcast=True and every block task gets that
    future, not the arrays; the epoch loss and parameters are still fit's."""
    X, y, _, _ = digits
    scatters, tasks = [], []
    scatter, submit = client.scatter, client.submit

    def counting_scatter(data, *args, **kwargs):
        scatters.append(kwargs.get("broadcast"))
        return scatter(data, *args, **kwargs)

    def recording_submit(fn, *args, **kwargs):
        if getattr(fn, "__name__", "") == "_step_task":
            tasks.append(args[1])
        return submit(fn, *args, **kwargs)

    monkeypatch.setattr(client, "scatter", counting_scatter)
    monkeypatch.setattr(client, "submit", recording_submit)
    model, opt = digits_model()
    history = bounded(adask.fit, digits_loss, model, opt, *digits_blocks(digits), epochs=1, batch_size=350,
                      client=client, timeout=TIMEOUT)
    monkeypatch.undo()
    steps = -(-len(X) // 350)
    assert scatters == [True] * (1 + steps)  # the compiled kernel once, then the parameters per step
    assert len(tasks) >= steps and all(isinstance(t, distributed.Future) for t in tasks)
    reference, reference_opt = digits_model()
    expected = adcompile.fit(digits_loss, reference, reference_opt, X, y, epochs=1, batch_size=350, progress=False)
    close(history, expected, rtol=1e-10)
    close(dict(model.named_parameters()), dict(reference.named_parameters()), rtol=1e-9)


def test_local_sgd_with_one_step_per_round_equals_the_synchronous_path(client, digits, synchronous_two_workers):
    """Local SGD's machinery (a learner per worker, averaging weighted by rows) with k = 1: for
    SGD with momentum the update is linear in the gradient, so the average of the learners'
    steps is the synchronous step (parameters, momentum buffers and epoch losses)."""
    from adcompile.dask import training
    model, opt = digits_model()
    history = bounded(training._fit, digits_loss, model, opt, *digits_blocks(digits), 3, 64, client, 1, True,
                      True, 0, (), 0, TIMEOUT)
    expected_model, expected_opt, expected_history = synchronous_two_workers
    close(history, expected_history, rtol=1e-10)
    close(dict(model.named_parameters()), dict(expected_model.named_parameters()), rtol=1e-9)
    for p, q in zip(model.parameters(), expected_model.parameters()):
        close(opt.state[p]["momentum_buffer"], expected_opt.state[q]["momentum_buffer"], rtol=1e-9)
        close(opt.state[p]["step"], expected_opt.state[q]["step"], rtol=0)


def test_local_sgd_on_two_workers_reaches_the_single_machine_accuracy(client, digits, single_machine):
    X, y, X_test, y_test = digits
    model, opt = digits_model()
    history = bounded(adask.fit, digits_loss, model, opt, *digits_blocks(digits), epochs=3, batch_size=64,
                      client=client, sync_every=4, timeout=TIMEOUT)
    reference, reference_history = single_machine
    assert accuracy(model, X_test, y_test) > 0.85
    assert len(history) == 3 and history[-1] < history[0]
    # an approximation: two learners averaged every 4 steps do not give fit's parameters
    assert not np.allclose(model[0].weight.data, reference[0].weight.data, rtol=1e-6, atol=0)
    steps = 3 * -(-len(X) // 64)
    assert all(float(opt.state[p]["step"][0]) == steps for p in model.parameters())


def dropout_model():
    adcompile.modules.init.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.Tanh(), nn.Dropout(0.3, seed=5), nn.Linear(32, 10))
    model.compile("python")
    return model, adcompile.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)


@pytest.fixture(scope="module")
def dropout_single_machine(digits):
    X, y, _, _ = digits
    model, opt = dropout_model()
    history = adcompile.fit(digits_loss, model, opt, X, y, epochs=2, batch_size=100, progress=False)
    return model, history


@pytest.mark.parametrize("local", [False, True], ids=["synchronous", "local-k1"])
def test_fit_with_dropout_draws_fits_masks_for_every_block(client, digits, dropout_single_machine, local):
    """Each block (uneven blocks, two workers) draws for its rows the Dropout mask adcompile.fit
    draws for them in the whole minibatch: the synchronous path gives fit's epoch losses and
    parameters, and so does local SGD with one step per round (SGD's update is linear)."""
    from adcompile.dask import training
    X, y, _, _ = digits
    model, opt = dropout_model()
    chunks = (310, 90, 500, 500)
    history = bounded(training._fit, digits_loss, model, opt, da.from_array(X, chunks=(chunks, -1)),
                      da.from_array(y, chunks=(chunks,)), 2, 100, client, 1, local, True, 0, (), 0, TIMEOUT)
    reference, reference_history = dropout_single_machine
    close(history, reference_history, rtol=1e-10)
    close(dict(model.named_parameters()), dict(reference.named_parameters()), rtol=1e-9)
    close(dict(model.named_buffers()), dict(reference.named_buffers()), rtol=0)  # the streams advanced alike


def test_local_sgd_with_dropout_is_reproducible(client, digits, dropout_single_machine):
    X, y, _, _ = digits
    runs = []
    for _ in range(2):
        model, opt = dropout_model()
        history = bounded(adask.fit, digits_loss, model, opt, *digits_blocks(digits), epochs=2, batch_size=100,
                          client=client, sync_every=3, timeout=TIMEOUT)
        runs.append((history, dict(model.named_parameters())))
    close(runs[0][0], runs[1][0], rtol=0)
    close(runs[0][1], runs[1][1], rtol=0)
    reference, _ = dropout_single_machine
    assert not np.allclose(runs[0][1]["0.weight"], reference[0].weight.data, rtol=1e-6, atol=0)  # approximate


@pytest.mark.parametrize("sync_every", [1, 5])
def test_fit_with_client_none_on_one_worker_gives_the_parameters_of_fit(digits, single_machine, monkeypatch,
                                                                         sync_every):
    """client=None starts (and stops) a LocalCluster sized to the machine, here made one worker;
    one worker's local SGD (sync_every=5) is plain minibatch SGD, so it equals fit too."""
    import psutil
    from adcompile.dask import cluster
    monkeypatch.setattr(cluster, "machine_workers", lambda: 1)
    children = {p.pid for p in psutil.Process().children(recursive=True)}
    X, y, _, _ = digits
    model, opt = digits_model()
    bounded(adask.fit, digits_loss, model, opt, da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=500),
            epochs=3, batch_size=64, sync_every=sync_every, timeout=TIMEOUT)
    reference, _ = single_machine
    close(dict(model.named_parameters()), dict(reference.named_parameters()), rtol=1e-9)
    deadline = time.monotonic() + 30
    while {p.pid for p in psutil.Process().children(recursive=True)} - children:
        assert time.monotonic() < deadline, "the LocalCluster's processes outlived fit"
        time.sleep(0.2)


@pytest.mark.parametrize("sync_every", [0, 1.5, True])
def test_fit_rejects_a_bad_sync_every(digits, sync_every):
    X, y, _, _ = digits
    model, opt = digits_model()
    with pytest.raises(adcompile.AdCompileError, match="sync_every must be an integer >= 1"):
        adask.fit(digits_loss, model, opt, X, y, sync_every=sync_every)


# ------------------------------------------------------------------ Newton-CG example
def test_newton_cg_example_converges_on_sharded_data(client):
    """examples/distributed_newton_cg.py's Newton-CG (gradients and Hessian-vector products from
    adcompile.dask over uneven blocks on two workers) reaches a point where the gradient written
    by hand over the whole data vanishes."""
    example = load_example("distributed_newton_cg")
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1500, 4))
    y = (rng.random(1500) < 1.0 / (1.0 + np.exp(-X @ np.array([1.5, -1.0, 0.5, 2.0])))).astype(np.float64)
    chunks = (400, 1, 699, 400)
    loss = adcompile.compile(example.loss, backend="python")
    w, history = bounded(example.newton_cg, loss, da.from_array(X, chunks=(chunks, -1)),
                         da.from_array(y, chunks=(chunks,)), client, tol=1e-9)
    assert history[-1][1] < 1e-9 and 3 <= len(history) <= 12
    assert np.linalg.norm(example.hand_gradient(w, X, y)) < 1e-9
    assert all(b[0] <= a[0] for a, b in zip(history, history[1:]))  # every step descends
