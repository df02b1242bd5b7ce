"""Helpers of the adcompile.dask tests (tests/dask/): the bound on every wait on the cluster,
running a call in a thread with that bound, and comparing results up to a relative tolerance."""
import concurrent.futures

import numpy as np
import pytest

TIMEOUT = 120  # seconds for any one wait on the cluster
WORKER_MEMORY = 500 * 2 ** 20  # bytes per worker of the tests' LocalCluster


def bounded(fn, *args, timeout=TIMEOUT, **kwargs):
    """fn(*args) in a thread, failing the test if it takes longer than ``timeout``."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(fn, *args, **kwargs).result(timeout=timeout)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"{getattr(fn, '__name__', fn)} did not finish in {timeout} s")
    finally:
        pool.shutdown(wait=False)


def close(actual, expected, rtol=1e-10):
    if isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            close(actual[key], expected[key], rtol)
        return
    if isinstance(expected, tuple):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            close(a, e, rtol)
        return
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=0)
