"""The cluster of the adcompile.dask tests: each test module gets its own LocalCluster (2 worker
processes, 1 thread each, a memory limit per worker smaller than the data of the out-of-memory
test), closed when the module's tests are done."""
import pytest

from dask_helpers import TIMEOUT, WORKER_MEMORY


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       memory_limit=WORKER_MEMORY, dashboard_address=":0")
    try:
        with distributed.Client(cluster, timeout=TIMEOUT) as c:
            c.wait_for_workers(2, timeout=TIMEOUT)
            yield c
    finally:
        cluster.close(timeout=TIMEOUT)
