"""A shrunk failing program kept as a regression case: its source, arguments and the oracles
it failed, checked with the same machinery as the random programs."""
import ast
from dataclasses import dataclass

from .generator import Program
from .oracles import check_program


@dataclass
class RegressionCase:
    name: str
    source: str
    args: tuple
    kind: str  # the failure kind it was found with, e.g. "wrong:grad-vs-fd"
    backend: str = "python"  # a mode of modes.py: "python", "lowered" or "numba"
    second_order: bool = False
    third_order: str = None  # a form of higher_order.THIRD_ORDER_FORMS, checked too
    returns: str = "scalar"
    xfail: str = ""  # reason, while the compiler bug is not fixed
    may_reject: bool = False  # a located AdCompileError is an acceptable fix (issue 8 item 4)
    seed: int = 0  # the program's seed, which picks what the third-order forms differentiate
    dtype: str = "float64"  # "float32": float32 arrays, compared with the program run in float64

    def program(self):
        tree = ast.parse(self.source)
        entry = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
        names = tuple(a.arg for a in entry.args.args)
        return Program(self.source, self.args, names, seed=self.seed, returns=self.returns, dtype=self.dtype)

    def acceptable(self, outcome):
        return outcome.status == "passed" or (self.may_reject and outcome.status == "rejected")

    def check(self):
        return check_program(self.program(), self.backend, self.second_order,
                             compare_backends=self.backend != "python", third_order=self.third_order)
