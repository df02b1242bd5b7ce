"""Settings for the whole test suite.

Tiered execution (``adcompile/backend/tiers.py``) is off, so that every numba-backend test
runs numba's machine code from its first call, deterministically; ``tests/backend/test_tiered.py``
switches it on for its own functions (``adcompile.compile(f, tiered=True)``).
"""
import os

os.environ["ADCOMPILE_TIERED"] = "0"  # inherited by the processes tests start
