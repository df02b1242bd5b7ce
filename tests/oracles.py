"""The numeric oracles the tests check derivatives against, in one place.

Everything here is computed without adcompile: central differences of plain evaluations
(directional, full gradient, Jacobian, Hessian as differences of a gradient or second
differences of a function), the transpose identity ``<v, J u> = <J^T v, u>`` that ties a
vjp to a jvp (or to a directional difference), and Hessian symmetry.

Points are moved in float64; an argument that is not an ndarray stays a Python float. Every
evaluation gets fresh copies of the array arguments, so a function that writes into its
arguments cannot change the next evaluation. Differences are float64 arrays; a function
returning a tuple gets a tuple of differences, part by part.
"""
import numpy as np

STEP = 1e-6  # the step of a central difference unless a test says otherwise


# ------------------------------------------------------------------ central differences
def central_difference(value_at, eps=STEP):
    """``(value_at(eps) - value_at(-eps)) / (2 eps)``: ``value_at(t)`` evaluates the function at
    the point moved by ``t`` along a direction (how it moves the point is its own business: a
    Module's parameters, an argument tuple...)."""
    plus, minus = value_at(eps), value_at(-eps)
    if isinstance(plus, tuple):
        return tuple(_difference(p, m, eps) for p, m in zip(plus, minus))
    return _difference(plus, minus, eps)


def _difference(plus, minus, eps):
    return (np.asarray(plus, dtype=np.float64) - np.asarray(minus, dtype=np.float64)) / (2 * eps)


def moved(args, directions, step):
    """Fresh copies of ``args`` with ``args[k]`` moved by ``step * directions[k]`` (in float64)."""
    out = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    for k, direction in directions.items():
        point = np.asarray(args[k], dtype=np.float64) + step * np.asarray(direction, dtype=np.float64)
        out[k] = point if isinstance(args[k], np.ndarray) else float(point)
    return out


def directional_difference(f, args, directions, eps=STEP):
    """The derivative of ``f(*args)`` along ``directions`` (``{argument position: direction}``,
    several arguments moved together) by a central difference: J u."""
    return central_difference(lambda t: f(*moved(args, directions, t)), eps)


def _unit(shape, flat_index):
    e = np.zeros(shape)
    e.flat[flat_index] = 1.0
    return e


def jacobian_by_differences(f, args, k=0, eps=STEP):
    """The Jacobian of ``f`` with respect to argument ``k``, column by column: shape
    ``f(*args).shape + args[k].shape``."""
    shape = np.shape(args[k])
    columns = [directional_difference(f, args, {k: _unit(shape, i)}, eps) for i in range(int(np.prod(shape)))]
    if not columns:
        return np.zeros(np.shape(f(*moved(args, {}, 0.0))) + shape)
    return np.moveaxis(np.array(columns), 0, -1).reshape(np.shape(columns[0]) + shape)


def gradient_by_differences(f, args, k=0, eps=STEP):
    """The gradient of the scalar ``f`` with respect to argument ``k``, entry by entry (shape of
    ``args[k]``)."""
    gradient = jacobian_by_differences(f, args, k, eps)
    assert gradient.shape == np.shape(args[k]), f"f is not scalar: its Jacobian has shape {gradient.shape}"
    return gradient


def hessian_by_differences(gradient, args, k=0, eps=1e-5):
    """The Hessian as the Jacobian of ``gradient`` (the gradient of a scalar function with
    respect to argument ``k``): shape ``args[k].shape + args[k].shape``, ``H[i..., j...]`` the
    derivative of gradient entry ``i`` along entry ``j``."""
    return jacobian_by_differences(gradient, args, k, eps)


def hessian_by_second_differences(f, args, k=0, eps=1e-4):
    """The Hessian of the scalar ``f`` with respect to argument ``k`` from values of ``f`` only
    (four evaluations per entry), shape ``(n, n)`` with ``n = args[k].size``."""
    n = int(np.size(args[k]))
    shape = np.shape(args[k])
    hessian = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = _unit(shape, i), _unit(shape, j)
            value = [float(f(*moved(args, {k: si * ei + sj * ej}, eps)))
                     for si, sj in ((1, 1), (1, -1), (-1, 1), (-1, -1))]
            hessian[i, j] = (value[0] - value[1] - value[2] + value[3]) / (4 * eps * eps)
    return hessian


# ------------------------------------------------------------------ identities
def inner(a, b):
    """``<a, b>`` and ``sum |a * b|`` (the scale a tolerance is relative to), in float64. ``a``
    and ``b`` are arrays or scalars, or equally long tuples/lists of them (summed over parts)."""
    a_parts = a if isinstance(a, (tuple, list)) else (a,)
    b_parts = b if isinstance(b, (tuple, list)) else (b,)
    assert len(a_parts) == len(b_parts), f"{len(a_parts)} parts against {len(b_parts)}"
    products = [np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64) for x, y in zip(a_parts, b_parts)]
    return sum(float(np.sum(p)) for p in products), sum(float(np.sum(np.abs(p))) for p in products)


def assert_close_scaled(analytic, numeric, scale, rtol, atol, what):
    """``|analytic - numeric| <= rtol * max(|analytic|, |numeric|) + atol * max(scale, 1)``."""
    bound = rtol * max(abs(analytic), abs(numeric)) + atol * max(scale, 1.0)
    assert abs(analytic - numeric) <= bound, \
        f"{what}: adcompile {analytic!r} != finite differences {numeric!r} (tolerance {bound:.3g})"


def assert_transpose_identity(v, j_u, jt_v, u, rtol, atol, what):
    """``<v, J u> = <J^T v, u>``: ``j_u`` is J u (a jvp, or a directional difference), ``jt_v`` the
    vjp of ``v`` (an array, or one part per argument, as ``u``). The tolerance is relative to the
    larger of the two sides' scales."""
    lhs, lhs_scale = inner(v, j_u)
    rhs, rhs_scale = inner(jt_v, u)
    assert_close_scaled(rhs, lhs, max(lhs_scale, rhs_scale), rtol, atol, what)


def assert_close_through(v, analytic, numeric, rtol, atol, what):
    """An analytic and a numeric derivative compared through a random cotangent ``v``:
    ``<v, analytic> = <v, numeric>``, the tolerance relative to the larger of the two scales."""
    analytic_value, analytic_scale = inner(v, analytic)
    numeric_value, numeric_scale = inner(v, numeric)
    assert_close_scaled(analytic_value, numeric_value, max(analytic_scale, numeric_scale), rtol, atol, what)


def assert_symmetric(hessian, rtol, atol, what="Hessian"):
    """A Hessian (shape ``s + s``, or a square matrix) equals its transpose."""
    n = int(np.sqrt(np.size(hessian)))
    matrix = np.reshape(hessian, (n, n))
    np.testing.assert_allclose(matrix, matrix.T, rtol=rtol, atol=atol, err_msg=f"{what} is not symmetric")


# ------------------------------------------------------------------ pytrees
def tree_gradient_by_differences(f, args, k=0, eps=STEP):
    """The gradient of the scalar ``f`` with respect to the pytree argument ``k`` (a dict, list,
    tuple ... of arrays and floats): the same structure, each leaf by central differences."""
    from adcompile import tree  # the flattening under test is exercised elsewhere; this only walks leaves

    leaves, treedef = tree.flatten(args[k])

    def with_leaf(j, value):
        changed = list(leaves)
        changed[j] = value
        return [treedef.unflatten(changed) if m == k else a for m, a in enumerate(args)]

    gradients = [gradient_by_differences(lambda x, j=j: f(*with_leaf(j, x)), [leaf], 0, eps)
                 for j, leaf in enumerate(leaves)]
    return treedef.unflatten(gradients)


def assert_trees_close(actual, expected, rtol, atol, what):
    """Two pytrees of the same structure with close leaves."""
    from adcompile import tree

    actual_leaves, actual_def = tree.flatten(actual)
    expected_leaves, expected_def = tree.flatten(expected)
    assert actual_def == expected_def, f"{what}: structure {actual_def} != {expected_def}"
    for path, a, e in zip(expected_def.paths(), actual_leaves, expected_leaves):
        np.testing.assert_allclose(np.asarray(a, dtype=np.float64), np.asarray(e, dtype=np.float64), rtol=rtol,
                                   atol=atol, err_msg=f"{what} at {path}")


def tree_jacobian_by_differences(f, args, k=0, eps=STEP):
    """The Jacobian of ``f`` (returning an array, or a pytree of arrays and floats) with respect to
    argument ``k`` (an array or a pytree) in JAX's structure: the output's structure outside,
    the argument's inside, each block of shape ``output leaf shape + argument leaf shape``."""
    from adcompile import tree

    leaves, treedef = tree.flatten(args[k])
    out_leaves, out_def = tree.flatten(f(*args))

    def with_leaf(j, value):
        changed = list(leaves)
        changed[j] = value
        return [treedef.unflatten(changed) if m == k else a for m, a in enumerate(args)]

    def block(o, j):
        return jacobian_by_differences(lambda x: tree.leaves(f(*with_leaf(j, x)))[o], [leaves[j]], 0, eps)
    return out_def.unflatten([treedef.unflatten([block(o, j) for j in range(len(leaves))])
                              for o in range(len(out_leaves))])
