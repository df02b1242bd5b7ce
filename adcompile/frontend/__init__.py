"""Frontend: Python source -> typed IR.

The handlers of numpy functions and custom Functions register into the tables of
``calls.py`` and ``extensions.py`` when their modules are imported: imported here, once.
"""
from . import numpy_arrays, numpy_elementwise, numpy_linalg, numpy_reductions, numpy_scans  # noqa: F401
from . import numpy_einsum, numpy_gathers, numpy_signals, numpy_solve, special_functions  # noqa: F401
from . import numpy_building, numpy_statistics  # noqa: F401
from . import custom_call  # noqa: F401
