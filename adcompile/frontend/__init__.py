"""Frontend: Python source -> typed IR.

The handlers of numpy functions and custom Functions register into the tables of
``calls.py`` and ``extensions.py`` when their modules are imported: imported here, once.

Where things are: ``parse.py`` (the ``Translator`` and ``translate``, the entry point) with its
parts in ``translator/``; the frontend values (``values.py``, ``static_values.py``), name
resolution (``resolve.py``), call dispatch (``calls.py``) with the numpy handlers by family in
``numpy/``; custom Functions in ``custom_functions/``; the user's source (``source.py``) and
what a translation read from outside it (``external_reads.py``).
"""
from .numpy import arrays as numpy_arrays  # noqa: F401
from .numpy import elementwise as numpy_elementwise  # noqa: F401
from .numpy.linalg import matrix_functions as numpy_linalg  # noqa: F401
from .numpy import reductions as numpy_reductions  # noqa: F401
from .numpy import scans as numpy_scans  # noqa: F401
from .numpy.linalg import einsum as numpy_einsum  # noqa: F401
from .numpy import gathers as numpy_gathers  # noqa: F401
from .numpy import signals as numpy_signals  # noqa: F401
from .numpy.linalg import solve as numpy_solve  # noqa: F401
from .numpy import special_functions  # noqa: F401
from .numpy import building as numpy_building  # noqa: F401
from .numpy import statistics as numpy_statistics  # noqa: F401
from .custom_functions import call as custom_call  # noqa: F401
from .custom_functions import stop_gradient as custom_stop_gradient  # noqa: F401
from .custom_functions import custom_rules  # noqa: F401
