"""Settings for the whole test suite.

Tiered execution (``adcompile/backend/tiers.py``) is off, so that every numba-backend test
runs numba's machine code from its first call, deterministically; ``tests/backend/test_tiered.py``
switches it on for its own functions (``adcompile.compile(f, tiered=True)``). Compiles still
running at exit are not finished in a detached process (``backend/finish_compiles.py``).
"""
import os

os.environ["ADCOMPILE_TIERED"] = "0"  # inherited by the processes tests start
# no test process leaves a detached numba compile behind at exit (backend/finish_compiles.py),
# except in tests/backend/test_finish_compiles.py, which switches it on for its own processes
os.environ["ADCOMPILE_FINISH_COMPILES"] = "0"
