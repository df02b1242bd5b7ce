"""Second order on the control-flow and call collections: every function of
``test_control_flow`` and ``test_calls`` — branches, for/while loops, break/continue/early
return, in-place writes, inlined helpers — gets its
Hessian-vector products (forward mode over the reverse sweep, tapes included) checked
against central differences of its gradient (``adcompile.gradgradcheck``: step 1e-5,
rtol 1e-4, atol 1e-6)."""
import numpy as np
import pytest

import adcompile
from test_calls import CASES as CALL_CASES
from test_control_flow import CASES as CONTROL_FLOW_CASES

CASES = CONTROL_FLOW_CASES + CALL_CASES


def _float_positions(args):
    return tuple(k for k, a in enumerate(args)
                 if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


@pytest.mark.parametrize("fn,args", CASES, ids=[c[0].__name__ for c in CASES])
def test_hessian_vector_products(fn, args):
    positions = _float_positions(args)
    compiled = adcompile.compile(fn, backend="python")
    assert adcompile.gradgradcheck(compiled, args, wrt=positions, directions=1)
