"""The liveness fixpoint of reverse mode raises, naming the function, when it does not converge."""
import numpy as np
import pytest

from adcompile.errors import InternalError
from adcompile.frontend.parse import translate
from adcompile.ir.builder import Namer
from adcompile.ir.types import Type
from adcompile.transforms.reverse import liveness, reverse


def rebinds_in_loop(x, n):
    for i in range(n):
        if x[0] > 0.0:
            x = np.sin(x) * x
    return np.sum(x)


def primal_ir():
    return translate(rebinds_in_loop, [Type("f8", 1), Type("i8", 0)])


def test_converging_function_needs_fewer_rounds_than_the_limit():
    assert reverse(primal_ir(), [0], Namer()).name == "rebinds_in_loop_grad"


def test_fixpoint_that_does_not_converge_raises_naming_the_function(monkeypatch):
    monkeypatch.setattr(liveness, "MAX_ROUNDS", 0)
    with pytest.raises(InternalError, match="rebinds_in_loop.*did not converge in 0 rounds"):
        reverse(primal_ir(), [0], Namer())
