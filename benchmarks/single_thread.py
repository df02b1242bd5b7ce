"""One thread for every implementation, set before numpy, numba, JAX or torch is imported.

Importing this module first (``run.py`` and ``first_call.py`` do) pins BLAS, numba, OpenMP
and XLA to one thread, so every implementation is measured on one core: the comparison is
about generated code, not about how many cores a library grabs on a shared machine.
"""
import os

THREAD_ENVIRONMENT = {
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMBA_NUM_THREADS": "1",
    "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1",
}
for _variable, _value in THREAD_ENVIRONMENT.items():
    os.environ.setdefault(_variable, _value)


def describe():
    """The thread settings in force, for the results header."""
    settings = ", ".join(f"{name}={os.environ[name]}" for name in THREAD_ENVIRONMENT)
    return f"{settings}; torch.set_num_threads(1)"
