"""Second derivatives of every rule, from the same table as the first-order checks.

For each entry of ``test_rules.CASES``, the Hessian-vector product of the scalar loss
``sum(sin(op(*args)))`` computed by adcompile (forward mode over reverse mode) is compared
with central differences of adcompile's own gradient along random directions
(``adcompile.gradgradcheck``; the gradient itself is checked against finite differences of
the function in ``test_rules.py``). Tolerances: step 1e-5, rtol 1e-4 and atol 1e-6, scaled
by the entry's own ``rtol`` factor for ill-conditioned entries.
"""
import numpy as np
import pytest

import adcompile
from test_rules import CASES, compiled


def _float_positions(args):
    return tuple(k for k, a in enumerate(args)
                 if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


@pytest.mark.parametrize("entry", CASES, ids=repr)
def test_second_derivative_float64(entry):
    args = entry.args()
    positions = _float_positions(args)
    if not positions:
        pytest.fail(f"{entry.name} has no float argument")
    _, fn = compiled(entry.name, "python", True)
    assert adcompile.gradgradcheck(fn, args, wrt=positions, rtol=1e-4 * entry.rtol,
                                   atol=1e-6 * entry.rtol, directions=2)
