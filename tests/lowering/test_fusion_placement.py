"""Where fusion places the statements around a loop, and the names the generated source uses
so that numba never confuses two of them (``adcompile/codegen/names.py``)."""
import ast
import re
from collections import Counter

import numpy as np
import pytest

import adcompile
from adcompile.backend.loader import load
from adcompile.codegen.names import written_names
from adcompile.codegen.python import generate
from adcompile.ir.nodes import Assign, Var, const
from adcompile.ir.shapes import infer_shapes
from adcompile.ir.types import FLOAT64, Type
from adcompile.lowering import fuse_loops

RNG = np.random.default_rng(11)
V = np.array([0.2, 0.9, -0.4, 0.6])


def lowered(derived, *args, extra=0):
    """(fused source, the number of fused loops, the fused function run as Python)."""
    fn = derived.ir(derived.signature(args[:len(args) - extra]))
    fused, loops = fuse_loops(fn, infer_shapes)
    source = generate(fused, origin="test_fusion_placement")
    return source, loops, load(source, fused.name, "python")


def softplus_objective(x, A):
    return np.sum(np.log(1 + np.exp(A @ x))) + 0.5 * x @ x


def tanh_objective(x):
    return np.tanh(x) * np.sum(x ** 2) + np.cos(x * V)


def test_statements_over_another_length_run_before_the_loop_and_do_not_split_it():
    """In the hvp, ``dx * 0.5`` (length x.shape[0]) sits between two runs over A.shape[0]: it
    runs before the loop, the runs share one loop, and no length of x is assumed equal to
    A's (the check would always fail and the loop never run)."""
    compiled = adcompile.compile(softplus_objective, backend="python")
    x, A, v = RNG.standard_normal(4), RNG.standard_normal((7, 4)), RNG.standard_normal(4)
    product = adcompile.api.derived.DerivedFunction(adcompile.grad(compiled), "jvp", (0,), tangents_only=True)
    source, loops, fused = lowered(product, x, A, v, extra=1)
    assert loops == 1 and "if " not in source, source
    expected = adcompile.hvp(compiled, (x, A), (v, None))
    np.testing.assert_allclose(fused(x, A, v)[0], expected, rtol=1e-12)
    hessian = np.array([adcompile.hvp(compiled, (x, A), (e, None)) for e in np.eye(4)])
    s = 1 / (1 + np.exp(-(A @ x)))
    np.testing.assert_allclose(hessian, A.T @ np.diag(s * (1 - s)) @ A + np.eye(4), rtol=1e-10)


def _numba_could_confuse(source):
    """Pairs (``A``, ``A_<k>``) of names in ``source`` where ``A`` is assigned more than once:
    numba's versions of ``A`` and its renaming of ``A_<k>`` in an array expression may meet."""
    function = next(node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.FunctionDef))
    assigned = Counter(a.arg for a in function.args.args)
    names = set(assigned)
    for node in ast.walk(function):
        if isinstance(node, ast.Name):
            names.add(node.id)
            assigned[node.id] += isinstance(node.ctx, ast.Store)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):  # not s[i] += e
            assigned[node.target.id] += 1
    return [(m.group(1), name) for name in names
            if (m := re.fullmatch(r"(.+)_(\d+)", name)) and assigned[m.group(1)] > 1]


def test_no_generated_name_is_a_version_numba_could_give_another():
    """The jvp of a forward Jacobian fuses loops behind checks that assign ``dt``, ``dx``, ...
    in both branches; ``dt_2`` next to them once stopped numba with ``'dt_2_2' not unique``."""
    jacobian = adcompile.jacobian(adcompile.compile(tanh_objective, backend="python"), mode="fwd")
    x = np.array([0.3, -0.7, 1.1, 0.5])
    product = adcompile.api.derived.DerivedFunction(jacobian, "jvp", (0,))
    source, loops, fused = lowered(product, x, V, extra=1)  # the hidden argument V is the tangent too
    assert loops >= 2 and "if " in source and _numba_could_confuse(source) == [], source
    expected = adcompile.jvp(jacobian, (x,), (V,))
    for got, want in zip(fused(x, V, V), expected):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    step = 1e-6
    np.testing.assert_allclose(fused(x, V, V)[1], (jacobian(x + step * V) - jacobian(x - step * V)) / (2 * step),
                               rtol=1e-5, atol=1e-7)


def test_only_names_after_a_versioned_name_are_respelled():
    f8 = Type(FLOAT64)
    dt, dt_2, dt_2_1, t_1 = (Var(name, f8) for name in ("dt", "dt_2", "dt_2_1", "t_1"))
    one = const(1.0)

    class Fn:
        params = [Var("t", f8)]
        body = [Assign(dt, "neg", [one]), Assign(dt, "neg", [one]), Assign(dt_2, "neg", [one]),
                Assign(dt_2_1, "neg", [dt_2]), Assign(t_1, "neg", [dt])]
    # dt is assigned twice: dt_2 is written dt2 (and dt_2_1 then follows no name); t once: t_1 stays
    assert written_names(Fn) == {"dt_2": "dt2"}


def test_a_repeated_hvp_call_takes_the_quick_path_and_still_checks_its_tangent():
    """``hvp(f, (x,), (v,))`` in a loop finds its product in one lookup after the first call
    (``derivatives._quick_hvp``); tangents it does not take as they are still go the general
    way: converted, or refused with the general error."""
    A = RNG.standard_normal((6, 3))

    def objective(x):
        return np.sum(np.log(1 + np.exp(A @ x))) + 0.5 * x @ x
    f = adcompile.compile(objective, backend="python")
    x, v = RNG.standard_normal(3), RNG.standard_normal(3)
    s = 1 / (1 + np.exp(-(A @ x)))
    expected = A.T @ (s * (1 - s) * (A @ v)) + v
    first = adcompile.hvp(f, (x,), (v,))
    assert adcompile.derivatives.forward._quick_hvp(f, (x,), (v,)) is not None
    np.testing.assert_allclose(first, expected, rtol=1e-12)
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (2 * v,)), 2 * expected, rtol=1e-12)
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (v.astype(np.float32),)), expected, rtol=1e-6)
    with pytest.raises(adcompile.errors.CallError, match="tangent for 'x' has shape"):
        adcompile.hvp(f, (x,), (np.ones(4),))


def test_a_name_for_an_array_does_not_keep_another_domain_from_its_loop():
    """In the batched Hessian, ``dt = A`` (a name, over A's shape) comes first; the curvature
    over ``A.shape[0]`` after it forms its own loop, instead of being moved before a group
    that never becomes a loop."""
    compiled = adcompile.compile(softplus_objective, backend="python")
    x, A = RNG.standard_normal(4), RNG.standard_normal((7, 4))
    source, loops, fused = lowered(adcompile.hessian(compiled), x, A)
    assert loops == 1 and source.count("for i in range(") == 1 and "for j in" not in source, source
    s = 1 / (1 + np.exp(-(A @ x)))
    np.testing.assert_allclose(fused(x, A), A.T @ ((s * (1 - s))[:, None] * A) + np.eye(4), rtol=1e-12)


def mixture_distances(means, icf, x):
    q = np.exp(icf)
    xc = x[:, None, :] - means[None, :, :]  # 3-d, after a 2-d loop
    qx = q[None, :, :] * xc
    return np.sum(qx * qx) + np.sum(q)


def test_a_statement_over_a_larger_domain_starts_its_own_loop_instead_of_running_before():
    """In the gradient, ``xc`` (n, k, d) does not join a 2-d loop; it leads a 3-d loop that
    the statements reading it join, rather than running before the 2-d loop as numpy."""
    compiled = adcompile.compile(mixture_distances, backend="python")
    args = RNG.standard_normal((3, 2)), RNG.standard_normal((3, 2)), RNG.standard_normal((5, 2))
    gradient = adcompile.grad(compiled, wrt=(0, 1, 2))
    source, loops, fused = lowered(gradient, *args)
    assert "xc_i = x[i, k] - means[j, k]" in source, source  # computed in the 3-d loop
    for got, expected in zip(fused(*args), gradient(*args)):
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    adcompile.gradcheck(compiled, args, wrt=(0, 1, 2))
