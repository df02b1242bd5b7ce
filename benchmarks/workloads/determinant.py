"""Determinants by cofactor expansion (CppAD's det_by_minor) written the numba way: the 4x4
determinant expands along its first row into 3x3 minors, copied into a small array by loops,
whose determinants expand into 2x2 ones. The objective sums the determinants of a batch of
matrices; the gradient is with respect to the whole batch.
"""
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads.peer_calls import jax_implementation

NAME = "determinant"
TITLE = "Determinant by cofactors, batch of 4x4"
SIZES = {"tiny": {"matrices": 5}, "full": {"matrices": 2000}}
NOTE = "forward: sum of the determinants; gradient: with respect to every matrix entry."


def minor(matrix, column):
    """``matrix`` without its first row and its ``column``-th column."""
    size = matrix.shape[0] - 1
    result = np.empty((size, size))
    for r in range(size):
        for c in range(size):
            source = c if c < column else c + 1
            result[r, c] = matrix[r + 1, source]
    return result


def det2(matrix):
    return matrix[0, 0] * matrix[1, 1] - matrix[0, 1] * matrix[1, 0]


def det3(matrix):
    total = 0.0
    sign = 1.0
    for column in range(3):
        total += sign * matrix[0, column] * det2(minor(matrix, column))
        sign = -sign
    return total


def det4(matrix):
    total = 0.0
    sign = 1.0
    for column in range(4):
        total += sign * matrix[0, column] * det3(minor(matrix, column))
        sign = -sign
    return total


def sum_of_determinants(matrices):
    total = 0.0
    for k in range(matrices.shape[0]):
        total += det4(matrices[k])
    return total


def make_inputs(size):
    return (np.random.default_rng(11).standard_normal((SIZES[size]["matrices"], 4, 4)),)


def adcompile_version(data):
    forward = compile_with_adcompile(sum_of_determinants)
    gradient = adcompile.grad(forward)
    return Implementation("adcompile", "adcompile", lambda: forward(*data), lambda: gradient(*data))


def jax_version(data, jax):
    """As a JAX user writes it: ``jnp.linalg.det`` of the batch (LU), summed."""
    return jax_implementation(jax, lambda matrices: jax.numpy.sum(jax.numpy.linalg.det(matrices)), data)
