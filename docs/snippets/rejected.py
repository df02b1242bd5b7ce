"""Programs adcompile rejects: docs/generate.py compiles each and puts the error it raises into
docs/language.md (so the documented messages are the real ones)."""
import numpy as np


def uses_try(x):
    try:
        y = np.log(x)
    except ValueError:
        y = x
    return np.sum(y)


def uses_generator(x):
    total = sum(v * v for v in x)
    return total


def uses_comprehension(x):
    return sum([v * v for v in x])


def uses_dict(x):
    d = {0: x}  # dicts in compiled code have constant string keys ({"a": x})
    return np.sum(d[0])


def reads_through_mask(x):
    return np.sum(x[x[:, 0] > 0, 1])


def no_rule(x):
    return np.sum(np.linalg.eig(x)[0])


def recursive(x, n):
    if n == 0:
        return x
    return recursive(x * 2.0, n - 1)


def writes_into_view(x):
    v = x[1:]
    v[0] = 0.0
    return np.sum(v * x)

