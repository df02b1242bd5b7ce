"""Regression cases found by the random-program tester (tests/randprog), shrunk to small
reproductions, plus issue 8's minimal reproductions of the same kinds.

Each case runs the same oracles as the random programs (plain Python, finite differences,
forward mode, second order where noted). Cases whose compiler bug is not fixed yet are
``xfail(strict=True)``: when a fix lands they fail as XPASS, and the marker is removed.
"""
import numpy as np
import pytest

from randprog.regression import RegressionCase
from randprog.shrink import snippet

CASES = [
    RegressionCase(
        name="loop_variable_reused_after_negative_step_loop",
        source='''
def f(a, x, n):
    p3, u4 = (2, x)
    for i in range(n, 1, -1):
        p3, a = (a, u4[i])
    for i in range(n):
        pass
    return p3
''',
        args=(-0.6595412323557484, np.array([0.8461755554888482, 0.17545819145646946, -0.38708208591177873]), 0),
        kind="crash:value_and_grad:UnboundLocalError",  # issue 8 item 2 (fixed)
    ),
    RegressionCase(
        name="jvp_of_write_into_argument_slice",
        source='''
import numpy as np

def f(x):
    x[:2] = 2 * x[:2]
    w3 = x.copy()
    return np.sum(w3)
''',
        args=(np.array([0.15614263050515298, -0.7163132975680087, -0.8518037021162552, 0.899562793255013]),),
        kind="wrong:jvp-vs-reverse",  # found by the fast profile; fixed while this was written
    ),
]


@pytest.mark.parametrize("case", [
    pytest.param(case, id=case.name,
                 marks=[pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else [])
    for case in CASES
])
def test_random_program_regression(case):
    outcome = case.check()
    assert case.acceptable(outcome), \
        snippet(case.program(), outcome, case.backend)
