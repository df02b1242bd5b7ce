"""The memory of this process as Linux reports it (``/proc/self/status``), for the benchmarks
that measure the peak memory of one call in a fresh process."""


def kilobytes(field):
    """A field of ``/proc/self/status`` in kB: ``VmRSS`` (resident now), ``VmHWM`` (peak)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")
