"""Inspection from Python (issue 12): ``source`` without arguments for derived functions,
``ir``, the IR after each stage, ``source_path`` and debugging the python backend, the notebook
display, and exceptions raised inside generated code naming the user's own line.

Functions use ``backend="python"`` except where the numba path is the point (one test).
"""
import bdb
import math
import os
import traceback

import numpy as np
import pytest

import adcompile
from adcompile.errors import CallError, ShapeError
from adcompile.inspection.ir_stages import ir_stages
from adcompile.passes import observed_passes
from adcompile.passes import pipeline

THIS_FILE = os.path.abspath(__file__)


def line_of(fn, text):
    """The line number in this file of the line of ``fn`` containing ``text``."""
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(k for k, line in enumerate(lines) if text in line)


def weighted_sines(x, k):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.sin(x[i]) * k
    return s


def shared_terms(x):
    a = np.exp(x) * np.exp(x)
    return np.sum(a + np.exp(x))


# ----------------------------------------------------------------- source without arguments
def test_source_of_a_derived_function_answers_for_the_last_call_of_its_base():
    f = adcompile.compile(weighted_sines, backend="python")
    with pytest.raises(CallError, match=r"neither grad\(weighted_sines\) nor weighted_sines has been "
                                        r"called yet.*adcompile.source\(fn, x, k\)"):
        adcompile.source(adcompile.grad(f))
    f(np.ones(3), 2.0)
    text = adcompile.source(adcompile.grad(f))
    assert "def weighted_sines_grad(x, k):" in text and "np.cos(x[i])" in text
    assert adcompile.source(adcompile.grad(f)) == adcompile.source(adcompile.grad(f), np.ones(3), 2.0)
    # second order: the Hessian, a loop of jvp(grad(f)), found through its base
    assert "def weighted_sines_hessian(x, k):" in adcompile.source(adcompile.hessian(f))
    assert "def weighted_sines_grad_jvp(x, k, dx):" in adcompile.source(adcompile.hessian(f).derived)


def test_source_answers_for_the_derived_functions_own_last_call_first():
    f = adcompile.compile(weighted_sines, backend="python")
    g = adcompile.grad(f, wrt="k")
    g(np.ones(2), 1.0)
    f(np.ones(2, dtype=np.float32), 1.0)  # a later call of the base with another signature
    assert adcompile.ir(g).startswith("def weighted_sines_grad(x:f8[:], k:f8):")
    assert adcompile.ir(adcompile.grad(f)).startswith("def weighted_sines_grad(x:f4[:], k:f8):")
    assert "bk" in adcompile.source(g)


def scaled(p0, scale=0.54):
    return p0 * scale


def test_example_arguments_bind_keywords_and_defaults_as_a_call_does():
    f = adcompile.compile(scaled, backend="python")
    # the default fills scale: the same code as the call f(0.3), which binds it the same way
    text = adcompile.source(f, 0.3)
    assert "def scaled(p0, scale):" in text
    assert text == adcompile.source(f, 0.3, 0.54) == adcompile.source(f, p0=0.3)
    assert f(0.3) == pytest.approx(0.3 * 0.54)
    # a keyword's type is part of the signature: an array scale gives array code
    assert adcompile.ir(f, 0.3, scale=np.ones(2)).startswith("def scaled(p0:f8, scale:f8[:]):")
    g = adcompile.grad(f)
    assert adcompile.ir(g, 0.3).startswith("def scaled_grad(p0:f8, scale:f8):")
    assert adcompile.source_path(g, 0.3).read_text() == adcompile.source(g, 0.3)
    assert [name for name, _ in ir_stages(g, p0=0.3)][0] == "parsed"
    assert "def scaled_hessian(p0, scale):" in adcompile.source(adcompile.hessian(f), 0.3)
    out, pullback = adcompile.vjp(f, 0.3)  # vjp binds its arguments the same way
    assert out == pytest.approx(0.162) and pullback(1.0) == pytest.approx((0.54, 0.3))
    assert "def scaled_vjp(p0, scale, ct):" in adcompile.source(pullback)
    # what a call rejects, source rejects with the call's message
    with pytest.raises(CallError, match=r"scaled\(\) takes 2 arguments \(p0, scale\): too many positional"):
        adcompile.source(f, 1.0, 2.0, 3.0)
    with pytest.raises(CallError, match="missing a required argument: 'p0'"):
        adcompile.source(f, scale=1.0)
    with pytest.raises(CallError, match="missing a required argument: 'p0'"):
        f(scale=1.0)


def squared_error(model, X, y):
    return np.mean((model(X)[:, 0] - y) ** 2)


def test_source_ir_and_source_path_of_a_function_of_a_module_show_the_code_a_call_runs():
    model = adcompile.nn.Linear(3, 2)
    model.weight.data[...] = [[0.5, -1.0, 2.0], [1.0, 1.0, 1.0]]
    X = np.array([[1.0, 2.0, 3.0], [0.5, -0.5, 0.0], [2.0, 0.0, -1.0], [0.0, 1.0, 1.0]])
    y = np.array([1.0, 0.0, -1.0, 2.0])
    f = adcompile.compile(squared_error, backend="python")
    g = adcompile.grad(f)
    # the module is replaced by its parameter arrays, as a call compiles it
    forward = adcompile.source(f, model, X, y)
    assert "def squared_error(model_weight, model_bias, X, y):" in forward
    text = adcompile.source(g, model, X, y)
    assert "def squared_error_grad(model_weight, model_bias, X, y):" in text
    assert text == adcompile.source(g, model, X, y=y) == adcompile.source_path(g, model, X, y).read_text()
    assert adcompile.ir(g, model, X, y).startswith(
        "def squared_error_grad(model_weight:f8[:,:], model_bias:f8[:], X:f8[:,:], y:f8[:]):")
    assert [name for name, _ in ir_stages(g, model, X, y)][0] == "parsed"
    # the shown code computes the call's gradient (the dict keyed like named_parameters())
    namespace = {}
    exec(text, namespace)
    weight_grad, bias_grad = namespace["squared_error_grad"](model.weight.data, model.bias.data, X, y)
    expected = g(model, X, y)
    assert list(expected) == ["weight", "bias"]
    np.testing.assert_allclose(weight_grad, expected["weight"], rtol=1e-12)
    np.testing.assert_allclose(bias_grad, expected["bias"], rtol=1e-12)
    # the pullback of vjp with a Module is the flat function already; its code takes the same arguments
    _, pullback = adcompile.vjp(f, model, X, y)
    assert "def squared_error_vjp(model_weight, model_bias, X, y, ct):" in adcompile.source(pullback, model, X, y)
    # a Hessian with respect to y is one function; with respect to the Module it is assembled from rows
    assert "def squared_error_hessian(model_weight, model_bias, X, y):" in adcompile.source(
        adcompile.hessian(f, wrt="y"), model, X, y)
    with pytest.raises(CallError, match=r"a hessian with respect to a Module.*assembled from one derivative per "
                                        r"row or column.*adcompile.source\(adcompile.grad"):
        adcompile.source(adcompile.hessian(f), model, X, y)
    # without arguments: the calls so far had a Module, whose code is per model structure
    with pytest.raises(CallError, match=r"has been called yet with arguments that are not Modules.*"
                                        r"adcompile.source\(fn, model, X, y\)"):
        adcompile.source(adcompile.grad(f))


def scaled_cubes(x, scale=2.0):
    return scale * np.sum(x ** 3)


def test_hessian_jacobian_jvp_and_hvp_bind_keywords_and_defaults_as_a_call_does():
    f = adcompile.compile(scaled_cubes, backend="python")
    x = np.array([1.0, -2.0])
    hessian = adcompile.hessian(f)
    expected = np.diag(6.0 * 2.0 * x)
    np.testing.assert_allclose(hessian(x), expected, rtol=1e-12)
    np.testing.assert_array_equal(hessian(x), hessian(x, 2.0))
    np.testing.assert_array_equal(hessian(x, scale=3.0), hessian(x, 3.0))
    np.testing.assert_array_equal(hessian(scale=2.0, x=x), hessian(x, 2.0))
    gradient = adcompile.grad(f)
    jacobians = [adcompile.jacobian(gradient), adcompile.jacobian(gradient, mode="fwd")]
    for jacobian in jacobians:  # the Jacobian of the gradient is the Hessian
        np.testing.assert_allclose(jacobian(x), expected, rtol=1e-12)
        np.testing.assert_array_equal(jacobian(x, scale=3.0), jacobian(x, 3.0))
    scale_jacobian = adcompile.jacobian(gradient, wrt="scale")
    np.testing.assert_allclose(scale_jacobian(x), 3.0 * x ** 2, rtol=1e-12)
    with pytest.raises(CallError, match=r"hessian\(scaled_cubes, wrt='x'\): scaled_cubes\(\) takes 2 arguments \(x, scale\): missing a required"):
        hessian(scale=1.0)
    # jvp and hvp: primals may stop before arguments with defaults (not differentiated)
    v = np.array([1.0, 0.5])
    out, tangent = adcompile.jvp(f, (x,), (v,))
    assert (out, tangent) == adcompile.jvp(f, (x, 2.0), (v, None))
    assert tangent == pytest.approx(2.0 * np.sum(3.0 * x ** 2 * v))
    np.testing.assert_array_equal(adcompile.hvp(f, (x,), (v,)), adcompile.hvp(f, (x, 2.0), (v, None)))
    np.testing.assert_allclose(adcompile.hvp(f, (x,), (v,)), expected @ v, rtol=1e-12)
    with pytest.raises(CallError, match="jvp: 1 primals but 2 tangents"):
        adcompile.jvp(f, (x,), (v, None))


def test_source_rejects_what_is_not_an_adcompile_function():
    with pytest.raises(CallError, match="takes a function made by adcompile.compile"):
        adcompile.source(np.sin)


# ----------------------------------------------------------------- ir and its stages
def test_ir_is_typed_text_and_the_last_stage_is_the_generated_source():
    f = adcompile.compile(weighted_sines, backend="python")
    g = adcompile.grad(f)
    text = adcompile.ir(g, np.ones(3), 2.0)
    assert text.startswith("def weighted_sines_grad(x:f8[:], k:f8):")
    assert "cos(_t_1:f8)" in text and "return [bx:f8[:]]" in text
    stages = ir_stages(g, np.ones(3), 2.0)
    names = [name for name, _ in stages]
    assert names[0] == "parsed" and names[1] == "grad(weighted_sines): transformed"
    assert names[-2:] == ["differentiated", "lowered"]
    assert stages[0][1].startswith("def weighted_sines(x:f8[:], k:f8):")
    assert stages[-3][1] == text
    assert stages[-2][1] == adcompile.source(g, np.ones(3), 2.0)
    assert stages[-1][1] == adcompile.source(g, np.ones(3), 2.0, stage="lowered")


@pytest.mark.parametrize("make", [lambda f: adcompile.grad(f), lambda f: adcompile.hessian(f).derived],
                         ids=["grad", "hessian"])
def test_stages_run_the_pipelines_passes_and_end_where_it_ends(make):
    f = adcompile.compile(shared_terms, backend="python")
    derived = make(f)
    stages = ir_stages(derived, np.ones(3))
    names = [name for name, _ in stages]
    assert any("common subexpressions" in name for name in names), names
    assert stages[-3][1] == adcompile.ir(derived, np.ones(3))


def test_the_observed_passes_are_the_pipelines():
    import inspect
    assert observed_passes.ROUNDS == inspect.signature(pipeline.optimize).parameters["rounds"].default
    assert [name for name, _ in observed_passes.CLEAN_UP] == [name for name, _ in pipeline.CLEAN_UP]
    assert [name for name, _ in observed_passes.FINAL] == [name for name, _ in pipeline.FINAL]


def weighted_exp(x, y):
    return np.sum(np.exp(x) * y)


def test_source_shows_the_differentiated_code_by_default_and_the_lowered_code_on_request(monkeypatch):
    for variable in ("ADCOMPILE_FUSE", "ADCOMPILE_REUSE"):
        monkeypatch.delenv(variable, raising=False)
    x, y = np.linspace(0.1, 0.5, 4), np.linspace(1.0, 2.0, 4)
    g = adcompile.grad(adcompile.compile(weighted_exp))  # numba: the lowering fuses its loops
    python_g = adcompile.grad(adcompile.compile(weighted_exp, backend="python"))
    default = adcompile.source(g, x, y)
    assert default == adcompile.source(g, x, y, stage="differentiated") == g.source(x, y)
    assert default == adcompile.source(python_g, x, y) == adcompile.source_path(python_g, x, y).read_text()
    lowered = adcompile.source(g, x, y, stage="lowered")
    assert lowered == g.source(x, y, stage="lowered") == adcompile.source_path(g, x, y).read_text()
    assert "for i in range(" in lowered and "for i in range(" not in default
    assert adcompile.ir_stages(g, x, y)[-2:] == [("differentiated", default), ("lowered", lowered)]
    assert "weighted_exp_grad" in g._repr_html_() and "range" not in g._repr_html_()  # the readable stage


def test_source_shows_an_ir_stage_by_name_and_lists_the_stages_for_an_unknown_one():
    g = adcompile.grad(adcompile.compile(weighted_sines, backend="python"))
    stages = adcompile.ir_stages(g, np.ones(3), 2.0)
    for name, text in stages[:2] + stages[-3:-2]:
        assert adcompile.source(g, np.ones(3), 2.0, stage=name) == text
    assert adcompile.source(g, stage="parsed").startswith("def weighted_sines(x:f8[:], k:f8):")
    for wrong in ("optimized", 2):
        with pytest.raises(CallError, match=r"adcompile.source\(grad\(weighted_sines\)\): unknown stage .*"
                                            r"'parsed', 'grad\(weighted_sines\): transformed', .*"
                                            r"'differentiated', 'lowered'") as caught:
            g.source(np.ones(3), 2.0, stage=wrong)
        assert caught.value.known == [name for name, _ in stages]


def long_named_reshape(first_long_argument_name, second_long_argument_name):
    return np.sum((first_long_argument_name * second_long_argument_name - first_long_argument_name
                   * 2.0).reshape((4, 2)) + second_long_argument_name[:2] * first_long_argument_name[:2])


def test_every_line_of_a_wrapped_statement_maps_to_the_users_line():
    """The map from generated lines to the user's (``api/source_lines.py``, which run-time errors
    use) covers each line of a statement broken over several."""
    from adcompile.api.source_lines import line_locations
    f = adcompile.compile(long_named_reshape, backend="python")
    args = (np.ones(8), np.ones(8))
    text = adcompile.source(f, *args)
    lines = text.splitlines()
    first = next(k for k, line in enumerate(lines, 1) if line.startswith("    return "))
    assert len(lines) > first, text  # the return statement is continued
    locations = line_locations(f.specialization(f.signature(args))[0], text)
    user_line = line_of(long_named_reshape, "return np.sum")
    assert [locations[k].lineno for k in range(first, len(lines) + 1)] == [user_line] * (len(lines) + 1 - first)


# ----------------------------------------------------------------- the generated file, debuggers
def index_past_end(x, n):
    s = 0.0
    for i in range(n):
        s += x[i] * x[i]
    return s


def test_python_backend_runs_the_file_at_source_path():
    f = adcompile.compile(index_past_end, backend="python")
    path = adcompile.source_path(f, np.ones(3), 2)
    assert path.is_file() and path.read_text() == adcompile.source(f, np.ones(3), 2)
    with pytest.raises(IndexError) as caught:
        f(np.ones(3), 5)
    frames = [frame.filename for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert str(path) in frames, frames


def test_a_breakpoint_in_the_generated_file_is_hit():
    f = adcompile.compile(index_past_end, backend="python")
    g = adcompile.grad(f)
    path = str(adcompile.source_path(g, np.ones(3), 2))
    line = next(k for k, text in enumerate(open(path).read().splitlines(), 1) if "bx[i] +=" in text)
    hits = []

    class Recorder(bdb.Bdb):  # what pdb is built on: a breakpoint set by file and line
        def user_line(self, frame):
            if self.break_here(frame):
                hits.append((frame.f_code.co_filename, frame.f_lineno, dict(frame.f_locals)["i"]))
            self.set_continue()

    debugger = Recorder()
    debugger.set_break(path, line)
    try:
        debugger.runcall(g, np.ones(3), 2)
    finally:
        debugger.clear_all_breaks()
    assert [(file, lineno) for file, lineno, _ in hits] == [(path, line), (path, line)]
    assert [i for _, _, i in hits] == [1, 0]  # the backward loop runs in reverse


# ----------------------------------------------------------------- errors inside generated code
def user_line_note(error):
    return "\n".join(getattr(error, "__notes__", []))


def test_index_out_of_bounds_names_the_users_line_in_forward_and_gradient():
    f = adcompile.compile(index_past_end, backend="python")
    expected = f'File "{THIS_FILE}", line {line_of(index_past_end, "s += x[i]")}'
    for fn in (f, adcompile.grad(f)):
        with pytest.raises(IndexError, match="out of bounds") as caught:
            fn(np.ones(3), 5)
        assert expected in user_line_note(caught.value), user_line_note(caught.value)


def pick(x, i):
    return x[i] * 2.0


def to_int(x):
    n = int(x)
    return x * n


def math_domain(x):
    y = math.sqrt(x)
    return x * y


def test_errors_that_are_not_about_shapes_keep_their_type_and_name_the_line():
    with pytest.raises(IndexError) as caught:  # (a division by zero gives inf, as in numpy: no error)
        adcompile.compile(pick, backend="python")(np.ones(3), 5)
    assert f"line {line_of(pick, 'return x[i]')}" in user_line_note(caught.value)
    with pytest.raises(ValueError, match="cannot convert float NaN") as caught:
        adcompile.compile(to_int, backend="python")(float("nan"))
    assert not isinstance(caught.value, ShapeError)
    assert f"line {line_of(to_int, 'n = int(x)')}" in user_line_note(caught.value)


def test_math_domain_follows_numpy_and_gives_nan():
    # math functions are compiled as their numpy counterparts (numba does the same)
    with np.errstate(invalid="ignore"):
        assert np.isnan(adcompile.compile(math_domain, backend="python")(-1.0))


def reshaped(x):
    return np.sum(x.reshape((4, 2)))


def test_a_shape_error_on_a_generated_line_broken_in_two_names_the_users_line():
    g = adcompile.grad(adcompile.compile(reshaped, backend="python"))
    with pytest.raises(ShapeError, match="cannot reshape array of size 6") as caught:
        g(np.ones(6))
    assert f'File "{THIS_FILE}", line {line_of(reshaped, "return np.sum")}' in str(caught.value)


def mismatched(a, b):
    return np.sum(a * b)


def test_a_shape_error_in_a_numba_compiled_return_line_names_the_users_line():
    f = adcompile.compile(mismatched)
    with pytest.raises(ShapeError, match=r"a has shape \(3,\) and b has shape \(4,\), which do not broadcast") as caught:
        f(np.ones(3), np.ones(4))
    assert f'File "{THIS_FILE}", line {line_of(mismatched, "return np.sum")}' in str(caught.value)


# ----------------------------------------------------------------- notebook display
def test_notebook_display_shows_the_signature_then_the_highlighted_source():
    f = adcompile.compile(weighted_sines, backend="python")
    g = adcompile.grad(f, wrt="x")
    before = g._repr_html_()
    assert "grad(weighted_sines)(x, k), with respect to x" in before and "Call it once" in before
    f(np.ones(3), 2.0)
    after = g._repr_html_()
    assert "x: a 1-d float64 array, k: a float64 scalar" in after
    assert "weighted_sines_grad" in after and "<span" in after  # highlighted by pygments
    assert "compiled function" in f._repr_html_()


def test_hessian_and_jacobian_are_derived_functions_that_display_their_source():
    f = adcompile.compile(weighted_sines, backend="python")
    hess = adcompile.hessian(f)
    jac = adcompile.jacobian(adcompile.grad(f), wrt="k")
    assert repr(hess) == "<adcompile hessian(weighted_sines, wrt='x')>"
    assert repr(jac) == "<adcompile jacobian(grad(weighted_sines), wrt='k', mode='rev')>"
    assert "Hessian of weighted_sines with respect to x" in hess.__doc__
    assert "Call it once" in hess._repr_html_()
    x = np.array([0.3, -1.2])
    expected = np.diag(-np.sin(x) * 2.0)
    np.testing.assert_allclose(hess(x, 2.0), expected, rtol=1e-12)
    np.testing.assert_allclose(jac(x, 2.0), np.cos(x), rtol=1e-12)  # d(cos(x) k)/dk
    shown = hess._repr_html_()
    assert "hessian(weighted_sines, wrt=&#x27;x&#x27;)(x, k), with respect to x" in shown
    assert "weighted_sines_hessian" in shown and "<span" in shown
    assert adcompile.source(hess) == adcompile.source(hess, x, 2.0)
    assert "def weighted_sines_grad_jvp(x, k, dx):" in adcompile.source(hess.derived, x, 2.0)
    # a derived function like the others: differentiated again (third derivatives of sin)
    third = adcompile.jacobian(hess)(x, 2.0)
    np.testing.assert_allclose(np.einsum("iii->i", third), -np.cos(x) * 2.0, rtol=1e-12)
