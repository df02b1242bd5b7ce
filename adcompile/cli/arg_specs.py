"""``--args "x=(6,) k=() n=int:5 A=float32:(3,4)"``: argument types and random values.

Each entry is ``NAME=SPEC``:

    (6,)  (3, 4)        a float64 array of that shape; ``()`` a float64 scalar
    float32:(3,4)       an array (or ``()`` scalar) of that dtype: float64, float32, int64, bool
    int:5  float:0.5    that integer or float value (not random)
    bool:true  none     that value

Floats are drawn uniformly from ``--range`` (default 0.5 to 1.5, inside the domain of log and
sqrt), integer arrays from 0 to 2, bool arrays at random.
"""
import re

import numpy as np

from .errors import UsageError

_ENTRY = re.compile(r"\s*([A-Za-z_]\w*)\s*=\s*((?:\w+:)?\([^)]*\)|\S+)")
_DTYPES = {"float64": np.float64, "float": np.float64, "float32": np.float32, "int64": np.int64,
           "int": np.int64, "bool": np.bool_}


def parse_args_spec(text):
    """``{name: spec}`` in order, where spec is ("array", dtype, shape) or ("value", value)."""
    specs, position = {}, 0
    text = text or ""
    while position < len(text.rstrip()):
        match = _ENTRY.match(text, position)
        if match is None:
            raise UsageError(f"malformed --args at {text[position:].strip()!r}: expected NAME=SPEC "
                             "entries such as x=(6,) k=() n=int:5 A=float32:(3,4)")
        name, spec = match.groups()
        if name in specs:
            raise UsageError(f"--args gives {name!r} twice")
        specs[name] = _parse_spec(name, spec)
        position = match.end()
    return specs


def _parse_spec(name, spec):
    kind, colon, rest = spec.partition(":")
    if not colon:
        kind, rest = "float64", spec
    kind = kind.lower()
    if rest.startswith("("):
        if kind not in _DTYPES:
            raise UsageError(f"--args {name}={spec}: unknown dtype {kind!r} (use {', '.join(_DTYPES)})")
        return ("array", _DTYPES[kind], _parse_shape(name, spec, rest))
    try:
        if kind == "int":
            return ("value", int(rest))
        if kind == "float":
            return ("value", float(rest))
        if kind == "bool" and rest.lower() in ("true", "false"):
            return ("value", rest.lower() == "true")
    except ValueError:
        pass
    if spec.lower() == "none":
        return ("value", None)
    raise UsageError(f"--args {name}={spec}: expected a shape such as (6,) or (), DTYPE:(shape), "
                     "int:N, float:V, bool:true or none")


def _parse_shape(name, spec, text):
    inner = text.strip()[1:-1].strip()
    if not text.strip().endswith(")"):
        raise UsageError(f"--args {name}={spec}: unclosed shape")
    try:
        return tuple(int(part) for part in inner.split(",") if part.strip())
    except ValueError:
        raise UsageError(f"--args {name}={spec}: a shape is a tuple of integers such as (3, 4)") from None


def parse_range(text):
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise UsageError(f"--range {text!r}: expected LOW,HIGH such as 0.5,1.5") from None
    if not low < high:
        raise UsageError(f"--range {text!r}: LOW must be below HIGH")
    return low, high


def make_arguments(specs, parameters, rng, low=0.5, high=1.5, defaults=()):
    """Values for ``parameters`` (names, in order) from ``specs``; parameters with a default
    value may be left out (the value is then their default)."""
    unknown = [name for name in specs if name not in parameters]
    if unknown:
        raise UsageError(f"--args names {', '.join(map(repr, unknown))}, but the function's "
                         f"parameters are {', '.join(parameters)}")
    values = []
    for name in parameters:
        if name not in specs:
            if name in defaults:
                values.append(defaults[name])
                continue
            raise UsageError(f"--args has no entry for parameter {name!r} (the parameters are "
                             f"{', '.join(parameters)}; e.g. --args \"{name}=(3,)\" for an array, "
                             f"\"{name}=()\" for a float)")
        values.append(_value(specs[name], rng, low, high))
    return values


def _value(spec, rng, low, high):
    if spec[0] == "value":
        return spec[1]
    _, dtype, shape = spec
    if dtype == np.bool_:
        data = rng.random(shape) < 0.5
    elif dtype == np.int64:
        data = rng.integers(0, 3, size=shape)
    else:
        data = rng.uniform(low, high, size=shape)
    if shape == ():  # Python numbers, except a float32 scalar, which keeps its dtype
        return np.float32(data) if dtype == np.float32 else {np.float64: float, np.int64: int,
                                                              np.bool_: bool}[dtype](data)
    return np.asarray(data, dtype=dtype)
