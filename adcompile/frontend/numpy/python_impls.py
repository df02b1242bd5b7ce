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
    return cumprod_leading(flat)


def polyval(p, x):
    y = x * 0.0
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


# Scans along the leading axis (the handlers move the scanned axis to the front): a loop over
# whole rows, so the derivative is the loop's, exact at zeros and at ties.
def _scan_leading(combine):
    """The scan of ``combine`` (a binary numpy ufunc, inlined as it is called) along axis 0."""
    def scan(x):
        out = np.empty_like(x)
        if x.shape[0] > 0:
            out[0] = x[0]
            for i in range(1, x.shape[0]):
                out[i] = combine(out[i - 1], x[i])
        return out
    return scan


cumprod_leading = _scan_leading(np.multiply)
maximum_accumulate_leading = _scan_leading(np.maximum)
minimum_accumulate_leading = _scan_leading(np.minimum)
