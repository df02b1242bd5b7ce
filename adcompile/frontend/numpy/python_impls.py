"""numpy functions written as plain Python loops, inlined where a compiled function calls them.

A function here is translated like a user's helper (``inline.inline_call``), so its derivative
comes from the loop's, exactly, with no rule of its own. Used for functions whose closed-form
derivative is awkward (``np.cumprod`` at zeros, ``np.maximum.accumulate`` at ties) or that are
loops by nature (``np.polyval``).
The handlers in ``calls.py`` check the arguments' kinds before inlining these.
"""
import numpy as np


def cumprod(x):
    flat = x.ravel()
    out = np.empty_like(flat)
    if flat.shape[0] > 0:
        out[0] = flat[0]
        for i in range(1, flat.shape[0]):
            out[i] = out[i - 1] * flat[i]
    return out


def polyval(p, x):
    y = x * 0.0
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


# Scans along the leading axis (the handlers move the scanned axis to the front): a loop over
# whole rows, so the derivative is the loop's, exact at zeros and at ties.
def cumprod_leading(x):
    out = np.empty_like(x)
    if x.shape[0] > 0:
        out[0] = x[0]
        for i in range(1, x.shape[0]):
            out[i] = out[i - 1] * x[i]
    return out


def maximum_accumulate_leading(x):
    out = np.empty_like(x)
    if x.shape[0] > 0:
        out[0] = x[0]
        for i in range(1, x.shape[0]):
            out[i] = np.maximum(out[i - 1], x[i])
    return out


def minimum_accumulate_leading(x):
    out = np.empty_like(x)
    if x.shape[0] > 0:
        out[0] = x[0]
        for i in range(1, x.shape[0]):
            out[i] = np.minimum(out[i - 1], x[i])
    return out
