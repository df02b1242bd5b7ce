"""The objective of the Hessian and Hessian-vector-product workloads and its derivatives by hand:

    f(x) = sum(log(1 + exp(A @ x))) + 0.5 * x @ x,   A of shape (200, 50)

Hessian: A.T @ diag(s * (1 - s)) @ A + I with s = sigmoid(A @ x).
"""
import numba
import numpy as np

SIZES = {"tiny": {"rows": 20, "variables": 5}, "full": {"rows": 200, "variables": 50}}


def build_objective(xp, A):
    def softplus_objective(x):
        return xp.sum(xp.log(1 + xp.exp(A @ x))) + 0.5 * x @ x
    return softplus_objective


def make_inputs(size):
    rows, variables = SIZES[size].values()
    rng = np.random.default_rng(2)
    A = rng.standard_normal((rows, variables)) / np.sqrt(variables)
    return A, rng.standard_normal(variables), rng.standard_normal(variables)


def curvature_numpy(A, x):
    s = 1.0 / (1.0 + np.exp(-(A @ x)))
    return s * (1.0 - s)


def hessian_numpy(A, x):
    return A.T @ (curvature_numpy(A, x)[:, None] * A) + np.eye(x.shape[0])


def hvp_numpy(A, x, v):
    return A.T @ (curvature_numpy(A, x) * (A @ v)) + v


@numba.njit
def objective_numba(A, x):
    total = 0.5 * np.dot(x, x)
    z = A @ x
    for i in range(z.shape[0]):
        total += np.log(1.0 + np.exp(z[i]))
    return total


@numba.njit
def curvature_numba(A, x):
    z = A @ x
    for i in range(z.shape[0]):
        s = 1.0 / (1.0 + np.exp(-z[i]))
        z[i] = s * (1.0 - s)
    return z


@numba.njit
def hessian_numba(A, x):
    weighted = A * curvature_numba(A, x).reshape(-1, 1)
    return A.T @ weighted + np.eye(x.shape[0])


@numba.njit
def hvp_numba(A, x, v):
    return A.T @ (curvature_numba(A, x) * (A @ v)) + v
