"""The GMM log-likelihood written with loops, as the AD benchmark suites write it for numba
(shared by ``compile_stages.py`` and ``whole_process.py``), and its arguments: 5 components,
3 dimensions, 50 points."""
import numpy as np


def gmm(alphas, means, icf, x):
    n, d = x.shape
    k = alphas.shape[0]
    total = 0.0
    for i in range(n):
        terms = np.empty(k)
        for j in range(k):
            q = np.exp(icf[j])
            diff = q * (x[i] - means[j])
            terms[j] = alphas[j] + np.sum(icf[j]) - 0.5 * np.sum(diff * diff)
        m = np.max(terms)
        total += m + np.log(np.sum(np.exp(terms - m)))
    m = np.max(alphas)
    return total - n * (m + np.log(np.sum(np.exp(alphas - m)))) + 0.5 * np.sum(np.exp(icf) ** 2)


def arguments():
    rng = np.random.default_rng(0)
    return rng.normal(size=5), rng.normal(size=(5, 3)), 0.1 * rng.normal(size=(5, 3)), rng.normal(size=(50, 3))
