"""Random programs as Module forwards: each generated program (tests/randprog) is rewritten so
that its body is the ``forward`` of a Module whose float array arguments are Parameters read
through ``self`` at the top of forward; the gradient dict is checked against central finite
differences and against ``adcompile.grad`` of the original function."""
import ast
import textwrap

import numpy as np
import pytest

import adcompile
from adcompile import Parameter
from module_helpers import directional_fd, random_direction
from randprog.generator import generate
from randprog.loading import load_module

SEEDS = range(24)


def as_module_source(program):
    """The program's source with ``def f(...)`` turned into ``RandomModule.forward``."""
    lines = program.source.split("\n")
    start = next(k for k, line in enumerate(lines) if line.startswith("def f("))
    end = next((k for k in range(start + 1, len(lines)) if lines[k] and not lines[k].startswith(" ")), len(lines))
    params = [n for n, a in zip(program.arg_names, program.args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    inputs = [n for n in program.arg_names if n not in params]
    body = "\n".join(lines[start + 1:end])
    written = _written_arguments(program.source)
    # A parameter the program writes into is copied first: as in PyTorch, forward may not
    # write into a trainable parameter in place (the gradient is then the same as f's).
    reads = "".join(f"        {name} = self.{name}{'.copy()' if name in written else ''}\n" for name in params)
    module = (f"class RandomModule(adcompile.Module):\n"
              f"    def forward({', '.join(['self'] + inputs)}):\n"
              f"{reads}{textwrap.indent(body, '    ')}\n\n\n"
              f"def loss({', '.join(['model'] + inputs)}):\n"
              f"    return model({', '.join(inputs)})\n\n\n")
    return "\n".join(lines[:start]) + "\n" + module + "\n".join(lines[start:]) + "\n", params, inputs


def _written_arguments(source):
    """Names written in place: ``x[...] = v``, ``x[...] op= v`` and ``x op= v`` (in place for arrays)."""
    written = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets if isinstance(t, ast.Subscript)]
        elif isinstance(node, ast.AugAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            while isinstance(target, (ast.Subscript, ast.Attribute)):
                target = target.value
            if isinstance(target, ast.Name):
                written.add(target.id)
    return written


def _as_float64(value):
    is_float_array = isinstance(value, np.ndarray) and value.dtype.kind == "f"
    return value.astype(np.float64) if is_float_array else value


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_as_module_forward(seed):
    program = generate(seed, returns="scalar")
    source, params, inputs = as_module_source(program)
    if not params:
        pytest.skip("the program has no float array argument")
    loaded = load_module(source, stem="module")
    # float64 throughout (the generator makes some programs float32): parameters are float64
    program_args = [_as_float64(a) for a in program.args]
    values = dict(zip(program.arg_names, program_args))
    model = loaded.RandomModule().compile("python")
    for name in params:
        setattr(model, name, Parameter(np.array(values[name], dtype=np.float64)))
    args = [values[name] for name in inputs]

    compiled = adcompile.compile(loaded.loss, backend="python")
    grads = adcompile.grad(compiled)(model, *args)
    assert list(grads) == params
    reference_fn = adcompile.compile(loaded.f, backend="python")
    wrt = tuple(program.arg_names.index(name) for name in params)
    reference = adcompile.grad(reference_fn, wrt=wrt)(*[np.copy(a) if isinstance(a, np.ndarray) else a
                                                        for a in program_args])
    for name, expected in zip(params, reference):
        np.testing.assert_allclose(grads[name], expected, rtol=1e-10, atol=1e-12, err_msg=name)
    direction = random_direction(model, seed)
    predicted = sum(float(np.sum(grads[n] * direction[n])) for n in direction)
    measured = directional_fd(lambda: compiled(model, *args), model, direction)
    assert np.isclose(predicted, measured, rtol=1e-5, atol=1e-6), (predicted, measured, source)
