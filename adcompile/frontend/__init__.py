"""Frontend: Python source -> typed IR.

The handlers of numpy functions and custom Functions register into the tables of
``calls.py`` and ``extensions.py`` when their modules are imported: imported here, once.
"""
from .numpy import arrays as numpy_arrays  # noqa: F401
from .numpy import elementwise as numpy_elementwise  # noqa: F401
from .numpy import linalg as numpy_linalg  # noqa: F401
from .numpy import reductions as numpy_reductions  # noqa: F401
from .numpy import scans as numpy_scans  # noqa: F401
from .numpy import einsum as numpy_einsum  # noqa: F401
from .numpy import gathers as numpy_gathers  # noqa: F401
from .numpy import signals as numpy_signals  # noqa: F401
from .numpy import solve as numpy_solve  # noqa: F401
from .numpy import special_functions  # noqa: F401
from .numpy import building as numpy_building  # noqa: F401
from .numpy import statistics as numpy_statistics  # noqa: F401
from . import custom_call  # noqa: F401
