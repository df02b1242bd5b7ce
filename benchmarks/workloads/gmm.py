"""Gradient of a Gaussian-mixture log-likelihood (ADBench's GMM objective with diagonal
covariances and a Wishart prior) with respect to its 3 parameter arrays: weights, means and
log inverse standard deviations. Its first call (compile time) is the figure to watch.
"""
import numba
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads.peer_calls import autograd_implementation, jax_implementation, torch_implementation

NAME = "gmm"
TITLE = "GMM log-likelihood gradient (3 arguments)"
SIZES = {"tiny": {"points": 10, "components": 3, "dimensions": 2},
         "full": {"points": 1000, "components": 10, "dimensions": 8}}
NOTE = "forward: the log-likelihood; gradient: with respect to weights, means and icf together."
WISHART_GAMMA, WISHART_M = 1.0, 0.5
PARAMETERS = (0, 1, 2)


def build_gmm(xp, amax):
    """The objective written with ``xp`` (numpy, jax.numpy, torch, autograd.numpy) and its max."""
    def logsumexp(v):
        m = amax(v)
        return m + xp.log(xp.sum(xp.exp(v - m)))

    def logsumexp_rows(a):
        m = amax(a, axis=1, keepdims=True)
        return m + xp.log(xp.sum(xp.exp(a - m), axis=1, keepdims=True))

    def gmm_objective(alphas, means, icf, x):
        n = x.shape[0]
        q = xp.exp(icf)
        xc = x[:, None, :] - means[None, :, :]
        qx = q[None, :, :] * xc
        main = alphas[None, :] + xp.sum(icf, axis=1)[None, :] - 0.5 * xp.sum(qx ** 2, axis=2)
        prior = 0.5 * WISHART_GAMMA ** 2 * xp.sum(q ** 2) - WISHART_M * xp.sum(icf)
        return xp.sum(logsumexp_rows(main)) - n * logsumexp(alphas) + prior
    return gmm_objective


def make_inputs(size):
    points, components, dimensions = SIZES[size].values()
    rng = np.random.default_rng(3)
    return (rng.standard_normal(components), rng.standard_normal((components, dimensions)),
            0.1 * rng.standard_normal((components, dimensions)), rng.standard_normal((points, dimensions)))


def adcompile_version(data):
    forward = compile_with_adcompile(build_gmm(np, np.max))
    gradient = adcompile.grad(forward, wrt=PARAMETERS)
    return Implementation("adcompile", "adcompile", lambda: forward(*data), lambda: gradient(*data))


def softmax_rows(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gmm_gradient_numpy(alphas, means, icf, x):
    q = np.exp(icf)
    qx = q[None, :, :] * (x[:, None, :] - means[None, :, :])
    main = alphas[None, :] + icf.sum(axis=1)[None, :] - 0.5 * np.sum(qx ** 2, axis=2)
    r = softmax_rows(main)
    weight = r.sum(axis=0)
    d_alphas = weight - x.shape[0] * softmax_rows(alphas[None, :])[0]
    d_means = q * np.einsum("ij,ijd->jd", r, qx)
    d_icf = weight[:, None] - np.einsum("ij,ijd->jd", r, qx ** 2) + WISHART_GAMMA ** 2 * q ** 2 - WISHART_M
    return d_alphas, d_means, d_icf


def numpy_version(data):
    forward = build_gmm(np, np.max)
    return Implementation("numpy", "numpy by hand", lambda: forward(*data), lambda: gmm_gradient_numpy(*data))


@numba.njit
def logsumexp_numba(v):
    m = v.max()
    return m + np.log(np.sum(np.exp(v - m)))


@numba.njit
def component_scores_numba(alphas, means, q, log_det, x_i, out):
    for j in range(alphas.shape[0]):
        squared = 0.0
        for d in range(x_i.shape[0]):
            t = q[j, d] * (x_i[d] - means[j, d])
            squared += t * t
        out[j] = alphas[j] + log_det[j] - 0.5 * squared


@numba.njit
def gmm_numba(alphas, means, icf, x):
    q, log_det, scores = np.exp(icf), icf.sum(axis=1), np.empty(alphas.shape[0])
    total = 0.0
    for i in range(x.shape[0]):
        component_scores_numba(alphas, means, q, log_det, x[i], scores)
        total += logsumexp_numba(scores)
    prior = 0.5 * WISHART_GAMMA ** 2 * np.sum(q * q) - WISHART_M * np.sum(icf)
    return total - x.shape[0] * logsumexp_numba(alphas) + prior


@numba.njit
def gmm_gradient_numba(alphas, means, icf, x):
    k, dims = means.shape
    q, log_det, scores = np.exp(icf), icf.sum(axis=1), np.empty(k)
    d_alphas, d_means, d_icf = np.zeros(k), np.zeros((k, dims)), np.zeros((k, dims))
    for i in range(x.shape[0]):
        component_scores_numba(alphas, means, q, log_det, x[i], scores)
        r = np.exp(scores - logsumexp_numba(scores))
        for j in range(k):
            d_alphas[j] += r[j]
            for d in range(dims):
                t = q[j, d] * (x[i, d] - means[j, d])
                d_means[j, d] += r[j] * q[j, d] * t
                d_icf[j, d] += r[j] * (1.0 - t * t)
    d_alphas -= x.shape[0] * np.exp(alphas - logsumexp_numba(alphas))
    d_icf += WISHART_GAMMA ** 2 * q * q - WISHART_M
    return d_alphas, d_means, d_icf


def numba_version(data):
    return Implementation("numba", "numba by hand (fused loops)", lambda: gmm_numba(*data),
                          lambda: gmm_gradient_numba(*data))


def jax_version(data, jax):
    return jax_implementation(jax, build_gmm(jax.numpy, jax.numpy.max), data, wrt=PARAMETERS)


def torch_version(data, torch):
    return torch_implementation(torch, build_gmm(torch, torch.amax), data, wrt=PARAMETERS)


def autograd_version(data, autograd):
    function = build_gmm(autograd.numpy, autograd.numpy.max)
    gradient_of_tuple = autograd.grad(lambda parameters, x: function(*parameters, x))
    return autograd_implementation(autograd, function, data,
                                   gradient=lambda alphas, means, icf, x: gradient_of_tuple((alphas, means, icf), x))
