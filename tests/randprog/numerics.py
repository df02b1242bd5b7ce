"""Numerical reference tools for the oracles: argument copies, flattening, central finite
differences with a self-consistency check, and an honest closeness test.

Arguments may be non-contiguous (``noncontiguous``); ``fresh`` copies keep their layout, so
every compiled call sees the layout the program was generated with.

Tolerances. Central differences with step ``h`` have truncation error ~ h**2 |f'''| / 6 and
rounding error ~ eps |f| / h. With h = 1e-5 and the programs' bounded values both are below
1e-9 |f|, so gradients are compared with rtol 1e-5 and atol 1e-7 * max(1, |f|). A function is
"benign at the sample point" when the differences with h = 1e-5 and h = 1e-4 agree to rtol
1e-5 (a kink or branch switch within ~1e-4 of the point breaks that agreement).
"""
import numpy as np

FD_STEP = 1e-5
FD_CHECK_STEP = 1e-4
RTOL = 1e-5
ATOL = 1e-7
EXACT_RTOL = 1e-9  # the same computation run two ways (plain Python, generated code, numba)
EXACT_ATOL = 1e-12
# float32 programs: every result is compared with the float64 reference (the same program on
# the arguments widened to float64) to rtol SINGLE_RTOL and atol SINGLE_ATOL * max(1, |f|):
# float32 rounds each operation to ~6e-8, and a chain of the programs' bounded operations
# (with the solves of matrices of condition number <= 9) stays well below 1e-4.
SINGLE_RTOL = 2e-3
SINGLE_ATOL = 1e-4


def widened(args):
    """The float32 arrays of ``args`` as float64."""
    return tuple(a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a for a in args)


def fresh(args):
    """Copies of the arguments, each array in its own layout (``same_layout_copy``)."""
    return tuple(same_layout_copy(a) if isinstance(a, np.ndarray) else a for a in args)


def noncontiguous(value, how):
    """``value`` (an array) with the same values in a non-contiguous layout: ``"strided"``
    (every other element of a buffer twice as long along axis 0) or ``"transposed"`` (a 2-D
    array stored column-major, as ``B.T`` of a row-major ``B``)."""
    if how == "transposed" and value.ndim == 2:
        return np.asfortranarray(value)
    buffer = np.zeros((2 * value.shape[0],) + value.shape[1:], dtype=value.dtype)
    buffer[::2] = value
    return buffer[::2]


def same_layout_copy(value):
    """A copy of array ``value`` with its layout (C order, column-major, or strided along axis 0)."""
    if value.flags.c_contiguous or value.ndim == 0:
        return value.copy()
    if value.ndim == 2 and value.flags.f_contiguous:
        return np.asfortranarray(value.copy())
    return noncontiguous(value.copy(), "strided")


def as_list(value):
    """A result (scalar, array or tuple) as a list of float arrays."""
    if isinstance(value, (tuple, list)):
        return [np.asarray(v, dtype=float) for v in value]
    return [np.asarray(value, dtype=float)]


def inner(xs, ys):
    return float(sum(np.sum(np.asarray(x) * np.asarray(y)) for x, y in zip(xs, ys)))


def perturbed(args, direction, step):
    """``args + step * direction`` for the float arguments (direction[k] None: unchanged)."""
    out = []
    for a, d in zip(args, direction):
        if d is None:
            out.append(a)
        elif isinstance(a, np.ndarray):
            out.append(a + step * d)
        else:
            out.append(a + step * float(d))
    return tuple(out)


def unit_directions(args, indices):
    """(argument index, element index, direction tuple) for every element of the float args."""
    for k in indices:
        a = args[k]
        size = np.size(a)
        for e in range(size):
            direction = [None] * len(args)
            if isinstance(a, np.ndarray):
                d = np.zeros(a.shape)
                d.flat[e] = 1.0
                direction[k] = d
            else:
                direction[k] = 1.0
            yield k, e, tuple(direction)


def central_gradient(loss, args, indices, step):
    """Central-difference gradient of scalar ``loss(*args)`` for the arguments ``indices``."""
    grads = {k: np.zeros(np.shape(args[k])) for k in indices}
    for k, e, direction in unit_directions(args, indices):
        up = loss(*perturbed(fresh(args), direction, step))
        down = loss(*perturbed(fresh(args), direction, -step))
        grads[k].flat[e] = (up - down) / (2.0 * step)
    return [grads[k] if np.ndim(args[k]) else float(grads[k]) for k in indices]


def close(actual, expected, rtol, atol):
    """Whether every array in ``actual`` is close to ``expected`` (same shapes required)."""
    actual, expected = as_list(actual), as_list(expected)
    if len(actual) != len(expected):
        return False
    for a, e in zip(actual, expected):
        if a.shape != e.shape:
            return False
        if not np.all(np.isfinite(a)) and not np.array_equal(a, e, equal_nan=True):
            return False
        if np.any(np.abs(a - e) > atol + rtol * np.abs(e)):
            return False
    return True


def worst(actual, expected):
    """A short description of the largest difference, for failure messages."""
    parts = []
    for a, e in zip(as_list(actual), as_list(expected)):
        parts.append(f"got {np.array2string(a, precision=6)} expected {np.array2string(e, precision=6)}")
    return "; ".join(parts)


def random_direction(rng, args, indices):
    direction = [None] * len(args)
    for k in indices:
        a = args[k]
        direction[k] = rng.standard_normal(a.shape) if isinstance(a, np.ndarray) else float(rng.standard_normal())
    return tuple(direction)
