"""The Dask client a training run uses: the caller's, or a LocalCluster of its own.

``client=None`` starts a ``distributed.LocalCluster`` sized to the machine (one single-threaded
worker process per CPU available to this process, the machine's memory split among them, the
dashboard on a free port) and closes it when the run ends, also on error or interrupt. A ``Client`` given by
the caller (``Client("tcp://scheduler:8786")`` for a real cluster) is used and left open.
"""
import contextlib
import os


def machine_workers():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def client_for(client):
    if client is not None:
        yield client
        return
    import distributed  # lazy: optional
    with distributed.LocalCluster(n_workers=machine_workers(), threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster:
        with distributed.Client(cluster, set_as_default=False) as own:
            yield own
