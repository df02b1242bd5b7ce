"""Realistic numeric programs written the way a numpy user writes them, not for adcompile.

Objectives of the standard AD benchmarks (ADBench GMM, bundle adjustment, LSTM, skinning),
PyTorch-tutorial code ported to numpy (two-layer net with a manual training loop, softmax
classifier, polynomial fit of sin(x)), classic optimisation objectives, small simulations
(n-body, RK4 pendulum, heat-equation stencils) and ML building blocks (attention, layer norm,
soft k-means, conv1d). Each program's compiled forward must equal the plain Python run and its
gradient must agree with central finite differences (``adcompile.gradcheck``). All programs run
on both backends: with ``backend="python"`` and a representative subset on numba in the default
run, every program on numba in the long profile (``-m slow``).

The last part checks that constructs outside the language give an ``AdCompileError`` naming the
construct and the line, rather than an internal traceback.
"""
import math
import os

import numpy as np
import pytest
import scipy.special as sp
from scipy import special
from scipy.special import gammaln, xlogy

import adcompile

THIS_FILE = os.path.abspath(__file__)


# ------------------------------------------------------------------ ADBench-style objectives
def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logsumexp_rows(x):
    m = np.max(x, axis=1, keepdims=True)
    return (m + np.log(np.sum(np.exp(x - m), axis=1, keepdims=True))).reshape(-1)


def gmm_objective(alphas, means, icf, x, wishart_gamma, wishart_m):
    n, d = x.shape
    k = alphas.shape[0]
    total = 0.0
    lse = np.zeros(k)
    for i in range(n):
        for j in range(k):
            q_diag = np.exp(icf[j, :d])
            xc = x[i] - means[j]
            qx = q_diag * xc
            lse[j] = alphas[j] + np.sum(icf[j, :d]) - 0.5 * np.sum(qx ** 2)
        total += logsumexp(lse)
    total -= n * logsumexp(alphas)
    total += 0.5 * wishart_gamma ** 2 * np.sum(np.exp(icf[:, :d]) ** 2) + wishart_m
    return total


def gmm_vectorized(alphas, means, icf, x):
    n, d = x.shape
    q = np.exp(icf)
    xc = x[:, None, :] - means[None, :, :]
    qx = q[None, :, :] * xc
    main = alphas[None, :] + np.sum(icf, axis=1)[None, :] - 0.5 * np.sum(qx ** 2, axis=-1)
    return np.sum(logsumexp_rows(main)) - n * logsumexp(alphas)


def rodrigues(rot, X):
    theta = np.sqrt(np.sum(rot ** 2))
    w = rot / theta
    tmp = np.dot(w, X) * (1.0 - np.cos(theta))
    return X * np.cos(theta) + np.cross(w, X) * np.sin(theta) + w * tmp


def project(cam, X):
    Xcam = rodrigues(cam[0:3], X - cam[3:6])
    proj = Xcam[:2] / Xcam[2]
    rsq = np.sum(proj ** 2)
    L = 1.0 + cam[9] * rsq + cam[10] * rsq * rsq
    return proj * L * cam[6] + cam[7:9]


def ba_objective(cams, X, obs, cam_idx, pt_idx):
    err = 0.0
    for i in range(len(obs)):
        r = project(cams[cam_idx[i]], X[pt_idx[i]]) - obs[i]
        err += np.sum(r ** 2)
    return err


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_cell(Wf, Wi, Wo, Wc, bf, bi, bo, bc, hidden, cell, x):
    z = np.concatenate((x, hidden))
    f = sigmoid(Wf @ z + bf)
    i = sigmoid(Wi @ z + bi)
    o = sigmoid(Wo @ z + bo)
    cell = f * cell + i * np.tanh(Wc @ z + bc)
    hidden = o * np.tanh(cell)
    return hidden, cell


def lstm_objective(Wf, Wi, Wo, Wc, bf, bi, bo, bc, seq):
    h = bf.shape[0]
    hidden = np.zeros(h)
    cell = np.zeros(h)
    total = 0.0
    for t in range(seq.shape[0] - 1):
        hidden, cell = lstm_cell(Wf, Wi, Wo, Wc, bf, bi, bo, bc, hidden, cell, seq[t])
        total += np.sum(seq[t + 1] * (hidden - logsumexp(hidden)))
    return -total / float(seq.shape[0] - 1)


def skinning(theta, base_verts, weights, bones):
    out = np.zeros_like(base_verts)
    for b in range(theta.shape[0]):
        c, s = np.cos(theta[b]), np.sin(theta[b])
        R = np.array([[c, -s], [s, c]])
        out += weights[:, b:b + 1] * (base_verts @ R.T + bones[b])
    return np.sum((out - base_verts) ** 2)


# ------------------------------------------------------------------ PyTorch tutorials, in numpy
def two_layer_loss(w1, w2, x, y):
    h_relu = np.maximum(x.dot(w1), 0)
    return np.square(h_relu.dot(w2) - y).sum()


def train_two_layer(w1, w2, x, y, lr, steps):
    for t in range(steps):
        h = x.dot(w1)
        h_relu = np.maximum(h, 0)
        y_pred = h_relu.dot(w2)
        grad_y_pred = 2.0 * (y_pred - y)
        grad_w2 = h_relu.T.dot(grad_y_pred)
        grad_h = grad_y_pred.dot(w2.T).copy()
        grad_h[h < 0] = 0
        w1 = w1 - lr * x.T.dot(grad_h)
        w2 = w2 - lr * grad_w2
    return np.square(np.maximum(x.dot(w1), 0).dot(w2) - y).sum()


def softmax_xent(W, b, X, y_onehot):
    logits = X @ W + b
    logits = logits - np.max(logits, axis=1, keepdims=True)
    p = np.exp(logits)
    p /= np.sum(p, axis=1, keepdims=True)
    return -np.mean(np.sum(y_onehot * np.log(p), axis=1))


def poly_fit(coef, x, y, lr, steps):
    a, b, c, d = coef
    for t in range(steps):
        y_pred = a + b * x + c * x ** 2 + d * x ** 3
        grad_y_pred = 2.0 * (y_pred - y)
        a -= lr * grad_y_pred.sum()
        b -= lr * (grad_y_pred * x).sum()
        c -= lr * (grad_y_pred * x ** 2).sum()
        d -= lr * (grad_y_pred * x ** 3).sum()
    return a + b + c + d


def inner_loss(w, X, y):
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))


def train_then_eval(w, X, y, lr):
    for _ in range(3):
        w = w - lr * adcompile.grad(inner_loss)(w, X, y)
    return inner_loss(w, X, y)


# ------------------------------------------------------------------ classic objectives
def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def beale(p):
    x, y = p
    return (1.5 - x + x * y) ** 2 + (2.25 - x + x * y ** 2) ** 2 + (2.625 - x + x * y ** 3) ** 2


def himmelblau(x, y):
    return (x ** 2 + y - 11) ** 2 + (x + y ** 2 - 7) ** 2


def logreg_l2(w, X, y, lam):
    return np.mean(np.log1p(np.exp(-y * (X @ w)))) + lam * np.sum(w ** 2)


def ridge(w, X, y, alpha):
    r = X @ w - y
    return r @ r / len(y) + alpha * np.dot(w, w)


def reg_no_bias(w, X, y, lam):
    wr = w.copy()
    wr[0] = 0.0
    return np.sum((X @ w - y) ** 2) + lam * np.sum(wr ** 2)


def huber(r, delta):
    a = np.abs(r)
    return np.sum(np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


def softplus(x):
    return np.sum(np.logaddexp(0.0, x)) + np.sum(np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x))))


def kl_div(logits_p, logits_q):
    p = np.exp(logits_p) / np.sum(np.exp(logits_p))
    logq = logits_q - np.log(np.sum(np.exp(logits_q)))
    return np.sum(p * (np.log(p) - logq))


def gaussian_nll(mu, log_sigma, x):
    sigma = np.exp(log_sigma)
    return np.sum(0.5 * ((x - mu) / sigma) ** 2 + log_sigma + 0.5 * np.log(2 * np.pi))


def newton_sqrt(a):
    x = a
    it = 0
    while abs(x * x - a) > 1e-12 and it < 50:
        x = 0.5 * (x + a / x)
        it += 1
    return x


# ------------------------------------------------------------------ simulations
def nbody(pos, vel, mass, dt, steps):
    n = pos.shape[0]
    for s in range(steps):
        acc = np.zeros_like(pos)
        for i in range(n):
            for j in range(n):
                if i != j:
                    d = pos[j] - pos[i]
                    acc[i] += mass[j] * d / (np.sum(d * d) + 0.01) ** 1.5
        vel = vel + dt * acc
        pos = pos + dt * vel
    return 0.5 * np.sum(mass[:, np.newaxis] * vel ** 2)


def pendulum_rk4(theta0, omega0, g, L, dt, steps):
    def deriv(th, om):
        return om, -g / L * math.sin(th)

    th, om = theta0, omega0
    for _ in range(steps):
        k1t, k1o = deriv(th, om)
        k2t, k2o = deriv(th + 0.5 * dt * k1t, om + 0.5 * dt * k1o)
        k3t, k3o = deriv(th + 0.5 * dt * k2t, om + 0.5 * dt * k2o)
        k4t, k4o = deriv(th + dt * k3t, om + dt * k3o)
        th = th + dt / 6.0 * (k1t + 2 * k2t + 2 * k3t + k4t)
        om = om + dt / 6.0 * (k1o + 2 * k2o + 2 * k3o + k4o)
    return th


def heat(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def heat2d(u0, r, steps):
    u = u0.copy()
    for _ in range(steps):
        lap = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        u[1:-1, 1:-1] += r * lap
    return np.sum(u * u)


# ------------------------------------------------------------------ ML building blocks
def soft_kmeans(centers, X, beta):
    d2 = np.sum((X[:, None, :] - centers[None, :, :]) ** 2, axis=-1)
    logits = -beta * d2
    logits -= np.max(logits, axis=1, keepdims=True)
    w = np.exp(logits)
    w = w / w.sum(axis=1, keepdims=True)
    return np.sum(w * d2)


def attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(Q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    A = np.exp(scores)
    A = A / A.sum(axis=-1, keepdims=True)
    return np.sum((A @ V) ** 2)


def layer_norm(x, gamma, beta):
    mu = x.mean(axis=-1, keepdims=True)
    var = np.var(x, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5) * gamma + beta
    return np.sum(np.tanh(y))


def batchnorm(x, gamma, beta):
    y = gamma * (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-5) + beta
    return (y ** 2).sum() + np.trace(x.T @ x)


def rnn(Wx, Wh, xs):
    h = np.zeros(Wh.shape[0])
    for t in range(xs.shape[0]):
        h = np.tanh(Wx @ xs[t] + Wh @ h)
    return np.sum(h ** 2)


def pairwise_energy(X):
    n = X.shape[0]
    D = np.sqrt(np.sum((X[:, np.newaxis, :] - X[np.newaxis, :, :]) ** 2, axis=-1) + 1e-9)
    return np.sum(np.exp(-D)) / float(n * n) + np.sum(np.linalg.norm(X, axis=1))


def conv1d(x, w):
    n, k = len(x), len(w)
    out = np.zeros(n - k + 1)
    for i in range(n - k + 1):
        for j in range(k):
            out[i] += x[i + j] * w[j]
    return np.sum(out ** 2)


def conv1d_slices(x, w):
    k = w.shape[0]
    n = x.shape[0] - k + 1
    out = np.zeros(n)
    for j in range(k):
        out += w[j] * x[j:j + n]
    return np.sum(np.sin(out))


def cumprod_loop(x):
    out = np.empty_like(x)
    acc = 1.0
    for i in range(x.shape[0]):
        acc = acc * x[i]
        out[i] = acc
    return np.sum(out) + np.sum(np.cumsum(x) ** 2) + np.sum(np.diff(x) ** 2)


def cumprod_polyval(x, M, c, t):
    return (np.sum(np.cumprod(x) * np.arange(4)) + np.sum(M.cumprod() ** 2) + np.polyval(c, t)
            + np.sum(np.polyval(c, x)))


def kmeans_hard(C, X):
    d2 = np.sum((X[:, None, :] - C[None, :, :]) ** 2, axis=-1)
    assignment = np.argmin(d2, axis=1)
    return np.sum((X - C[assignment]) ** 2)


def classifier_report(W, X, labels):
    scores = X @ W
    accuracy = np.mean(np.argmax(scores, axis=1) == labels)
    top2 = np.sum(np.sort(scores[:, 0])[-2:])
    order = np.argsort(W.ravel())
    return (np.sum(scores ** 2) + accuracy + np.sum(scores.argmin(axis=0)) + np.argmax(scores) + top2
            + np.sum(W.ravel()[order] * np.arange(6)) + np.sum(np.sort(W, axis=None)))


def norms(x, X):
    return (np.linalg.norm(x, 1) + np.linalg.norm(x, ord=np.inf) + np.linalg.norm(x, -np.inf)
            + np.linalg.norm(x, 2) + np.sum(np.linalg.norm(X, 1, axis=1))
            + np.sum(np.linalg.norm(X, ord=np.inf, axis=0, keepdims=True)) + np.sum(np.linalg.norm(X, axis=1)))


def horner(coeffs, x):
    result = 0.0
    for c in coeffs:
        result = result * x + c
    return result


def horner_vec(coeffs, x):
    result = np.zeros_like(x)
    for i in range(len(coeffs)):
        result = result * x + coeffs[i]
    return np.sum(result)


def reversed_scan(x):
    acc = 0.0
    out = np.zeros(len(x))
    for i in range(len(x) - 1, -1, -1):
        acc = 0.9 * acc + x[i]
        out[i] = acc
    return np.sum(out[::-1] * np.arange(len(x))) + out[-1]


def idioms(x, t):
    n, *rest = x.shape
    a, b = x[0, :2]
    y = x[..., None] * x[:, None, ...]
    z = np.concatenate([x[0], [1.0, t]])
    return a * b + np.sum(y[0, ..., 0]) + np.sum(z ** 2) * n + rest[0]


def adam_fit(w, X, y, lr, steps):
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    b1, b2, eps = 0.9, 0.999, 1e-8
    for t in range(steps):
        g = 2.0 * X.T @ (X @ w - y) / len(y)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        mhat = m / (1 - b1 ** (t + 1))
        vhat = v / (1 - b2 ** (t + 1))
        w = w - lr * mhat / (np.sqrt(vhat) + eps)
    return np.sum((X @ w - y) ** 2)


def gmm_full_cov(alphas, means, icf, x):
    n, d = x.shape
    total = 0.0
    for j in range(alphas.shape[0]):
        L = np.zeros((d, d))
        idx = d
        for c in range(d):
            L[c, c] = math.exp(icf[j, c])
            for r in range(c + 1, d):
                L[r, c] = icf[j, idx]
                idx += 1
        for i in range(n):
            Lx = L @ (x[i] - means[j])
            total += alphas[j] + np.sum(icf[j, :d]) - 0.5 * Lx @ Lx
    return total


def angle_axis_to_rot(aa):
    theta = np.linalg.norm(aa)
    n = aa / theta
    c, s = math.cos(theta), math.sin(theta)
    K = np.array([[0.0, -n[2], n[1]], [n[2], 0.0, -n[0]], [-n[1], n[0], 0.0]])
    return np.eye(3) + s * K + (1 - c) * (K @ K)


def hand_chain(pose, offsets, verts):
    T = np.eye(4)
    total = 0.0
    for b in range(pose.shape[0]):
        local = np.eye(4)
        local[:3, :3] = angle_axis_to_rot(pose[b])
        local[:3, 3] = offsets[b]
        T = T @ local
        p = (T @ np.concatenate((verts[b], np.ones(1))))[:3]
        total += np.sum(p ** 2)
    return total


def wave(u, uprev, c, steps):
    for _ in range(steps):
        unew = u.copy()
        unew[1:-1] = 2 * u[1:-1] - uprev[1:-1] + c * (u[2:] - 2 * u[1:-1] + u[:-2])
        uprev = u
        u = unew
    return np.sum(u ** 2)


def swap_vars(a, b, n):
    for _ in range(n):
        a, b = b, a + b * 0.5
    return a * b + max(a, b) ** 2 + min(a * b, 1.0) + abs(a - b)


def scatter_duplicates(x, idx, s):
    out = np.zeros((3, 2))
    out[idx] += x  # numpy: with a repeated index only the last write counts
    out[idx, 1] = s * x[:, 0]
    cols = np.zeros((2, 3))
    cols[:, idx] = x.T * 2.0
    return np.sum(out ** 2 * np.array([1.0, 2.0])) + np.sum(cols ** 2 * np.arange(3))


def rbf_kernel(X, ls):
    sq = np.sum(X ** 2, axis=1)
    D = sq[:, None] + sq[None, :] - 2 * X @ X.T
    K = np.exp(-0.5 * D / ls ** 2) + 1e-6 * np.eye(X.shape[0])
    return np.sum(K @ np.ones(X.shape[0]))


def gd_until_converged(w, A, b, lr):
    g = A.T @ (A @ w - b)
    it = 0
    while np.linalg.norm(g) > 1e-3 and it < 100:
        w = w - lr * g
        g = A.T @ (A @ w - b)
        it += 1
    return np.sum(w ** 2)


def features(x, w):
    F = np.stack([x, x ** 2, np.sin(x)], axis=1)
    s = 0.0
    for row in F:
        s += np.tanh(row @ w)
    for a, b in zip(x, w):
        s += a * b ** 2
    return s + np.sum(F.T @ F)


def _rng(seed):
    return np.random.default_rng(seed)


def _args(seed, *shapes):
    rng = _rng(seed)
    return tuple(rng.standard_normal(s) for s in shapes)


# name -> (function, argument factory, wrt)
K, D, N = 3, 2, 4
LINES = np.linspace(-np.pi, np.pi, 20)
PROGRAMS = {
    "gmm_objective": (gmm_objective, lambda: _args(0, K, (K, D), (K, D), (N, D)) + (1.0, 3),
                      (0, 1, 2)),
    "gmm_vectorized": (gmm_vectorized, lambda: _args(1, K, (K, D), (K, D), (N, D)), (0, 1, 2)),
    "ba_objective": (ba_objective, lambda: (np.abs(_args(2, (2, 11))[0]) * 0.3 + 0.1,
                                            _args(3, (3, 3))[0] + np.array([0, 0, 5.0]), _args(4, (4, 2))[0],
                                            np.array([0, 1, 1, 0]), np.array([0, 1, 2, 2])), (0, 1)),
    "lstm_objective": (lstm_objective, lambda: tuple(0.5 * a for a in _args(5, *[(3, 6)] * 4))
                       + tuple(0.1 * a for a in _args(6, 3, 3, 3, 3)) + _args(7, (4, 3)), tuple(range(8))),
    "skinning": (skinning, lambda: _args(8, 3, (5, 2)) + (np.abs(_args(9, (5, 3))[0]),) + _args(10, (3, 2)),
                 (0, 3)),
    "two_layer_loss": (two_layer_loss, lambda: _args(11, (4, 5), (5, 2), (6, 4), (6, 2)), (0, 1)),
    "train_two_layer": (train_two_layer, lambda: tuple(0.3 * a for a in _args(12, (4, 5), (5, 2)))
                        + _args(13, (6, 4), (6, 2)) + (1e-3, 3), (0, 1)),
    "softmax_xent": (softmax_xent, lambda: _args(14, (4, 3), 3, (5, 4)) + (np.eye(3)[[0, 1, 2, 0, 1]],),
                     (0, 1)),
    "poly_fit": (poly_fit, lambda: (0.1 * _args(15, 4)[0], LINES, np.sin(LINES), 1e-4, 5), (0,)),
    "train_then_eval": (train_then_eval, lambda: _args(16, 3, (8, 3)) + ((_args(17, 8)[0] > 0) * 1.0, 0.5),
                        (0,)),
    "rosenbrock": (rosenbrock, lambda: _args(18, 5), (0,)),
    "beale": (beale, lambda: _args(19, 2), (0,)),
    "himmelblau": (himmelblau, lambda: (0.3, -1.2), (0, 1)),
    "logreg_l2": (logreg_l2, lambda: _args(20, 3, (8, 3)) + (np.sign(_args(21, 8)[0]), 0.1), (0,)),
    "ridge": (ridge, lambda: _args(22, 3, (8, 3), 8) + (0.1,), (0,)),
    "reg_no_bias": (reg_no_bias, lambda: _args(23, 3, (6, 3), 6) + (0.3,), (0,)),
    "huber": (huber, lambda: (2 * _args(24, 7)[0], 1.0), (0,)),
    "softplus": (softplus, lambda: _args(25, 6), (0,)),
    "kl_div": (kl_div, lambda: _args(26, 4, 4), (0, 1)),
    "gaussian_nll": (gaussian_nll, lambda: _args(27, 3, 3, 3), (0, 1)),
    "newton_sqrt": (newton_sqrt, lambda: (2.0,), (0,)),
    "nbody": (nbody, lambda: _args(28, (3, 2), (3, 2)) + (np.abs(_args(29, 3)[0]) + 0.5, 0.01, 3), (0, 1, 2)),
    "pendulum_rk4": (pendulum_rk4, lambda: (0.5, 0.1, 9.81, 1.0, 0.01, 10), (0, 1, 2, 3)),
    "heat": (heat, lambda: _args(30, 8) + (0.2, 5), (0, 1)),
    "heat2d": (heat2d, lambda: _args(31, (5, 5)) + (0.1, 3), (0, 1)),
    "soft_kmeans": (soft_kmeans, lambda: _args(32, (3, 2), (6, 2)) + (2.0,), (0, 2)),
    "attention": (attention, lambda: _args(33, (3, 4), (5, 4), (5, 2)), (0, 1, 2)),
    "layer_norm": (layer_norm, lambda: _args(34, (3, 4), 4, 4), (0, 1, 2)),
    "batchnorm": (batchnorm, lambda: _args(35, (5, 3), 3, 3), (0, 1, 2)),
    "rnn": (rnn, lambda: tuple(0.5 * a for a in _args(36, (3, 2), (3, 3))) + _args(37, (4, 2)), (0, 1)),
    "pairwise_energy": (pairwise_energy, lambda: _args(38, (4, 2)), (0,)),
    "conv1d": (conv1d, lambda: _args(39, 8, 3), (0, 1)),
    "conv1d_slices": (conv1d_slices, lambda: _args(40, 8, 3), (0, 1)),
    "cumprod_loop": (cumprod_loop, lambda: _args(41, 5), (0,)),
    "cumprod_polyval": (cumprod_polyval, lambda: (np.array([0.5, 0.0, -1.5, 2.0]),) + _args(67, (2, 3), 3)
                        + (0.4,), (0, 1, 2, 3)),
    "kmeans_hard": (kmeans_hard, lambda: _args(68, (3, 2), (8, 2)), (0, 1)),
    "classifier_report": (classifier_report, lambda: _args(66, (3, 2), (5, 3)) + (np.array([0, 1, 1, 0, 1]),),
                          (0, 1)),
    "norms": (norms, lambda: (np.array([0.3, -1.2, 0.7]),) + _args(69, (3, 4)), (0, 1)),
    "horner": (horner, lambda: _args(42, 5) + (0.7,), (0, 1)),
    "horner_vec": (horner_vec, lambda: _args(43, 5, 3), (0, 1)),
    "reversed_scan": (reversed_scan, lambda: _args(44, 6), (0,)),
    "adam_fit": (adam_fit, lambda: _args(46, 3, (8, 3), 8) + (0.05, 4), (0, 1, 2)),
    "gmm_full_cov": (gmm_full_cov, lambda: _args(47, 2, (2, 3)) + (0.3 * _args(48, (2, 6))[0],)
                     + _args(49, (3, 3)), (0, 1, 2)),
    "hand_chain": (hand_chain, lambda: _args(54, (3, 3), (3, 3), (3, 3)), (0, 1)),
    "wave": (wave, lambda: _args(55, 7, 7) + (0.2, 4), (0, 1, 2)),
    "swap_vars": (swap_vars, lambda: (0.3, 0.5, 4), (0, 1)),
    "scatter_duplicates": (scatter_duplicates, lambda: _args(56, (4, 2)) + (np.array([0, 2, 2, -1]), 0.7),
                           (0, 2)),
    "rbf_kernel": (rbf_kernel, lambda: _args(57, (4, 2)) + (0.8,), (0, 1)),
    "gd_until_converged": (gd_until_converged, lambda: _args(58, 3, (5, 3), 5) + (0.05,), (1, 2)),
    "features": (features, lambda: _args(59, 3, 3), (0, 1)),
    "idioms": (idioms, lambda: _args(45, (3, 4)) + (0.5,), (0, 1)),
}
NUMBA_SUBSET = ["gmm_objective", "ba_objective", "lstm_objective", "train_two_layer", "beale",
                "pendulum_rk4", "heat", "attention", "hand_chain", "classifier_report"]


# --- issue 14: shifts, padding, signals, gathers and scatters ---
def fir_signal_model(taps, gain, signal, target):
    """A learned FIR filter (its taps and an output gain) applied to an edge-padded signal,
    with an echo, fitted to a target by squared error, with a smoothness penalty on the taps."""
    k = taps.shape[0]
    padded = np.pad(signal, (k // 2, k - 1 - k // 2), mode="edge")
    filtered = gain * np.convolve(padded, taps, mode="valid")
    output = filtered + 0.3 * np.roll(filtered, 2)
    residual = output - target
    return np.mean(residual ** 2) + 0.01 * np.sum(np.diff(taps) ** 2)


def _fir_args():
    t = np.linspace(0.0, 4.0 * np.pi, 24)
    rng = _rng(70)
    noisy = np.sin(t) + 0.3 * rng.standard_normal(24)
    return 0.2 * rng.standard_normal(5), 1.3, noisy, np.sin(t)


PROGRAMS["fir_signal_model"] = (fir_signal_model, _fir_args, (0, 1))
NUMBA_SUBSET.append("fir_signal_model")


# --- issue 14: eigh, svd, qr, scans along axes, nan-reductions ---
def max_drawdown_penalty(weights, returns):
    """Finance: a portfolio's mean return minus its maximum drawdown (wealth by cumprod, the
    running peak by maximum.accumulate), missing returns (NaN) ignored by nanmean."""
    w = np.exp(weights) / np.sum(np.exp(weights))
    filled = np.where(returns == returns, returns, 0.0)
    wealth = np.cumprod(1.0 + filled @ w)
    peak = np.maximum.accumulate(wealth)
    drawdown = np.max((peak - wealth) / peak)
    return np.sum(np.nanmean(returns, axis=0) * w) - 0.5 * drawdown


def pca_reconstruction(X, lam):
    """Statistics: the error of a rank-2 PCA reconstruction (projector from the SVD's right
    singular vectors: sign-invariant) plus a nuclear-norm penalty."""
    Xc = X - np.mean(X, axis=0)
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    P = Vt[:2].T @ Vt[:2]
    err = np.sum((Xc - Xc @ P) ** 2)
    return err + lam * np.sum(np.linalg.svd(X, compute_uv=False))


def whitened_gaussian_nll(L, X):
    """Physics/ML: the negative log-likelihood of rows of X under N(0, S), S = L L^T + I, with
    log det S and the whitening S^-1/2 from eigh."""
    S = L @ L.T + np.eye(L.shape[0])
    w, V = np.linalg.eigh(S)
    Z = X @ (V / np.sqrt(w)) @ V.T
    return 0.5 * np.sum(Z * Z) + 0.5 * X.shape[0] * np.sum(np.log(w))


def qr_residual_with_sorted_scores(X, y):
    """Regression: the residual of y off the column space of X (Q Q^T from QR), and a trimmed
    loss: the sum of the largest half of the squared residuals (sort)."""
    Q, R = np.linalg.qr(X)
    r = y - Q @ (Q.T @ y)
    ranked = np.sort(r * r)
    cum = np.cumsum(np.sort(X * X, axis=0), axis=0)
    return np.sum(ranked[r.shape[0] // 2:]) + 1e-3 * np.sum(cum[-1])


def _returns_with_gaps():
    returns = 0.02 * _args(71, (8, 3))[0]
    returns[2, 1] = returns[5, 0] = np.nan
    return returns


PROGRAMS.update({
    "max_drawdown_penalty": (max_drawdown_penalty, lambda: _args(70, 3) + (_returns_with_gaps(),), (0,)),
    "pca_reconstruction": (pca_reconstruction, lambda: _args(72, (6, 4)) + (0.1,), (0, 1)),
    "whitened_gaussian_nll": (whitened_gaussian_nll, lambda: _args(73, (3, 3), (5, 3)), (0, 1)),
    "qr_residual_with_sorted_scores": (qr_residual_with_sorted_scores, lambda: _args(74, (7, 3), 7), (0, 1)),
})
NUMBA_SUBSET += ["max_drawdown_penalty", "whitened_gaussian_nll"]


def svd_with_full_matrices(x):
    return np.sum(np.linalg.svd(x)[0])


def lstsq_of_a_stack(x):
    return np.sum(np.linalg.lstsq(x, x[:, 0], rcond=None)[0])


def qr_complete(x):
    return np.sum(np.linalg.qr(x, mode="complete")[1])


def sort_over_two_axes(x):
    return np.sum(np.sort(x, axis=(0, 1)))


def maximum_reduce(x):
    return np.maximum.reduce(x)


@pytest.mark.parametrize("fn,arg,needle", [
    (svd_with_full_matrices, np.eye(3), "full_matrices=False"),
    (lstsq_of_a_stack, np.ones((2, 3, 3)), "stacks of matrices are not supported"),
    (qr_complete, np.eye(3), "mode='reduced' only"),
    (sort_over_two_axes, np.ones((2, 3)), "axis must be a constant integer"),
    (maximum_reduce, np.ones(3), "'maximum.reduce' is not supported"),
])
def test_decomposition_and_scan_forms_outside_the_language_are_located_errors(fn, arg, needle):
    with pytest.raises(adcompile.AdCompileError) as error:
        adcompile.grad(adcompile.compile(fn, backend="python"))(arg)
    assert needle in str(error.value) and "test_realistic_programs.py" in str(error.value)


# --- issue 14: special functions and predicates ---
def focal_loss(logits, y, gamma=2.0, alpha=0.25):
    """Binary focal loss (RetinaNet), called with its defaults."""
    p = sp.expit(logits)
    pt = y * p + (1 - y) * (1 - p)
    weight = y * alpha + (1 - y) * (1 - alpha)
    return -np.mean(weight * (1 - pt) ** gamma * np.log(pt))


def negative_binomial_nll(w, log_r, X, counts):
    """Negative-binomial regression (overdispersed counts), dispersion r fitted too."""
    mu = np.exp(X @ w)
    r = np.exp(log_r)
    loglik = (gammaln(counts + r) - gammaln(r) - gammaln(counts + 1.0) + r * np.log(r / (r + mu))
              + xlogy(counts, mu / (r + mu)))
    return -np.sum(loglik)


def probit_regression(w, X, y):
    z = X @ w
    phi = 0.5 * special.erfc(-z / math.sqrt(2.0))
    return -np.sum(xlogy(y, phi) + xlogy(1.0 - y, 1.0 - phi))


def student_t_nll(loc, log_scale, log_nu, x):
    nu, scale = np.exp(log_nu), np.exp(log_scale)
    z = (x - loc) / scale
    logpdf = (special.gammaln((nu + 1.0) / 2.0) - special.gammaln(nu / 2.0) - 0.5 * np.log(nu * np.pi)
              - log_scale - (nu + 1.0) / 2.0 * np.log1p(z * z / nu))
    return -np.sum(logpdf)


def dirichlet_multinomial(log_alpha, counts):
    """Dirichlet-multinomial log-likelihood of count rows; checks its input with np.all."""
    alpha = np.exp(log_alpha)
    total = 0.0
    if np.all(counts >= 0):
        a0 = np.sum(alpha)
        for i in range(counts.shape[0]):
            n = np.sum(counts[i])
            total += gammaln(a0) - gammaln(n + a0) + np.sum(gammaln(counts[i] + alpha) - gammaln(alpha))
    return -total + 1e-3 * np.sum(sp.digamma(alpha))


def label_smoothed_softmax(W, X, labels_onehot, smoothing=0.1):
    logits = X @ W
    logp = sp.log_softmax(logits, axis=1)
    targets = (1.0 - smoothing) * labels_onehot + smoothing / labels_onehot.shape[1]
    entropy_bonus = np.sum(sp.softmax(logits, axis=1) * logp)
    return -np.mean(np.sum(targets * logp, axis=1)) + 0.01 * entropy_bonus + 0.1 * np.mean(sp.logsumexp(logits, axis=1))


PROGRAMS.update({
    "focal_loss": (focal_loss, lambda: _args(70, 6) + ((_args(71, 6)[0] > 0) * 1.0,), (0,)),
    "negative_binomial_nll": (negative_binomial_nll, lambda: (0.3 * _args(72, 3)[0], 0.2, 0.5 * _args(73, (7, 3))[0],
                                                              np.array([0.0, 3.0, 1.0, 0.0, 7.0, 2.0, 1.0])), (0, 1)),
    "probit_regression": (probit_regression, lambda: _args(74, 3, (8, 3)) + ((_args(75, 8)[0] > 0) * 1.0,), (0,)),
    "student_t_nll": (student_t_nll, lambda: (0.1, -0.2, 1.1) + _args(76, 9), (0, 1, 2)),
    "dirichlet_multinomial": (dirichlet_multinomial, lambda: (0.3 * _args(77, 4)[0],
                                                              np.array([[3.0, 0.0, 2.0, 1.0], [1.0, 4.0, 0.0, 2.0]])),
                              (0,)),
    "label_smoothed_softmax": (label_smoothed_softmax,
                               lambda: _args(78, (4, 3), (6, 4)) + (np.eye(3)[[0, 1, 2, 0, 1, 2]],), (0,)),
})
NUMBA_SUBSET += ["focal_loss", "negative_binomial_nll", "student_t_nll", "label_smoothed_softmax"]


# --- issue 14: linear solves, determinants, einsum, tensordot, kron, batched matmul ---
def gp_neg_log_marginal_likelihood(log_lengthscale, log_noise, x, y):
    """A Gaussian process with an RBF kernel: -log p(y | x), through the Cholesky factor."""
    n = x.shape[0]
    lengthscale, noise = np.exp(log_lengthscale), np.exp(log_noise)
    sq_dist = np.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=2)
    kernel = np.exp(-0.5 * sq_dist / lengthscale ** 2) + noise * np.eye(n)
    low = np.linalg.cholesky(kernel)
    alpha = np.linalg.solve(low.T, np.linalg.solve(low, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(low))) + 0.5 * n * np.log(2.0 * np.pi)


def logistic_newton_step(w, X, y, damping):
    """The loss after one damped Newton step of L2-regularised logistic regression."""
    p = 1.0 / (1.0 + np.exp(-(X @ w)))
    grad = X.T @ (p - y) + 0.1 * w
    hess = X.T @ (X * (p * (1.0 - p))[:, None]) + (0.1 + damping) * np.eye(w.shape[0])
    w_new = w - np.linalg.solve(hess, grad)
    p_new = 1.0 / (1.0 + np.exp(-(X @ w_new)))
    return -np.sum(y * np.log(p_new) + (1.0 - y) * np.log(1.0 - p_new)) + 0.05 * w_new @ w_new


def mvn_log_density(mean, cov_factor, x):
    """Sum of the log-densities of the rows of x under N(mean, F F^T + I)."""
    d = mean.shape[0]
    cov = cov_factor @ cov_factor.T + np.eye(d)
    sign, logdet = np.linalg.slogdet(cov)
    diff = x - mean
    mahalanobis = np.einsum('ni,ij,nj->n', diff, np.linalg.inv(cov), diff)
    return np.sum(-0.5 * mahalanobis) - x.shape[0] * 0.5 * (sign * logdet + d * np.log(2.0 * np.pi))


PROGRAMS.update({
    "gp_neg_log_marginal_likelihood": (gp_neg_log_marginal_likelihood,
                                       lambda: (np.log(0.8), np.log(0.1)) + _args(73, (6, 2), 6), (0, 1, 3)),
    "logistic_newton_step": (logistic_newton_step,
                             lambda: _args(74, 3, (8, 3)) + ((_args(75, 8)[0] > 0) * 1.0, 0.5), (0, 1, 3)),
    "mvn_log_density": (mvn_log_density, lambda: _args(76, 3, (3, 2), (5, 3)), (0, 1, 2)),
})
NUMBA_SUBSET += ["gp_neg_log_marginal_likelihood", "logistic_newton_step", "mvn_log_density"]


def _uses_einsum_repeated_3d(a, x):
    return np.sum(np.einsum("iij->j", a) * x)


def _uses_einsum_wrong_count(a, x):
    return np.einsum("ij,j->i", a) @ x


def _uses_tensordot_uneven_axes(a, x):
    return np.sum(np.tensordot(a, a, axes=([0, 1], [0])) * x)


def _uses_kron_mixed(a, x):
    return np.sum(np.kron(a[0], a) * x)


def _uses_lstsq_rcond(a, x):
    return np.sum(np.linalg.lstsq(a[0], x, rcond=1e-6)[0])


def _uses_lstsq_residuals(a, x):
    return np.sum(np.linalg.lstsq(a[0], x)[1])


def _uses_cholesky_upper(a, x):
    return np.sum(np.linalg.cholesky(a[0] @ a[0].T, upper=True))


def _uses_dot_of_stacks(a, x):
    return np.sum(np.dot(a, x))


@pytest.mark.parametrize("fn,needle", [
    (_uses_einsum_repeated_3d, "supported for 2-d operands ('ii') only"),
    (_uses_einsum_wrong_count, "2 operand subscript(s) for 1 operand(s)"),
    (_uses_tensordot_uneven_axes, "the two axis lists differ in length"),
    (_uses_kron_mixed, "two 1-d or two 2-d arrays"),
    (_uses_lstsq_rcond, "rcond=None (the default) only"),
    (_uses_lstsq_residuals, "only the solution (its result [0]) is computed"),
    (_uses_cholesky_upper, "upper=True) is not supported"),
    (_uses_dot_of_stacks, "more than 2 dimensions is not supported"),
])
def test_linear_algebra_forms_outside_the_language_are_located_errors(fn, needle):
    with pytest.raises(adcompile.AdCompileError) as info:
        adcompile.grad(adcompile.compile(fn, backend="python"))(*_args(77, (3, 3, 3), 3))
    assert needle in str(info.value) and THIS_FILE in str(info.value)


# --- issue 14 leftovers: stacked linalg, einsum ellipses ---
def gaussian_mixture_log_likelihood(means, factors, logits, x):
    """Log-likelihood of the rows of x under a mixture of K Gaussians N(mean_k, F_k F_k^T + I):
    a stack of K covariance matrices, log-determined and solved at once."""
    d = means.shape[1]
    covs = np.einsum("...ij,...kj->...ik", factors, factors) + np.eye(d)
    sign, logdets = np.linalg.slogdet(covs)
    diffs = x[None, :, :] - means[:, None, :]
    solved = np.linalg.solve(covs, np.swapaxes(diffs, 1, 2))
    mahalanobis = np.einsum("...ij,...ji->...i", diffs, solved)
    log_weights = logits - np.log(np.sum(np.exp(logits)))
    log_components = log_weights[:, None] - 0.5 * (mahalanobis + logdets[:, None] + d * np.log(2.0 * np.pi))
    top = np.max(log_components, axis=0)
    return np.sum(top + np.log(np.sum(np.exp(log_components - top), axis=0)))


PROGRAMS["gaussian_mixture_log_likelihood"] = (gaussian_mixture_log_likelihood,
                                               lambda: _args(78, (3, 2), (3, 2, 2), 3, (6, 2)), (0, 1, 2))
NUMBA_SUBSET.append("gaussian_mixture_log_likelihood")


# --- issue 14: building and reshaping arrays, statistics ---
def quantile_regression(w, b, X, y, tau):
    """Pinball (quantile) loss of a linear model, made scale-free by a robust scale estimate:
    the interquartile range of the residuals around their median, from np.percentile."""
    r = y - (X @ w + b)
    q25, q75 = np.percentile(r, [25, 75])
    scale = (q75 - q25) / 1.349 + 1e-3
    u = (r - np.median(r)) / scale
    pinball = np.maximum(tau * u, (tau - 1.0) * u)
    return np.mean(pinball) + 0.01 * np.sum(w * w)


def grid_features(a, c, x):
    """A separable surface on a grid (np.meshgrid) whose upper triangle is penalised (np.triu),
    read as columns (np.column_stack) and resampled (np.repeat, np.tile)."""
    X, Y = np.meshgrid(x, x, indexing="ij")
    surface = a[0] * X + a[1] * Y + c * X * Y
    upper = np.triu(surface, 1)
    columns = np.column_stack((np.repeat(a, 2), np.tile(x[:2], 2)))
    return np.sum(upper ** 2) + np.sum(np.flip(columns, axis=0) @ a) + np.median(surface)


def _quantile_regression_args():
    w, X, y = _args(80, 3, (20, 3), 20)
    return w, 0.3, X, y, 0.7


PROGRAMS["quantile_regression"] = (quantile_regression, _quantile_regression_args, (0, 1))
PROGRAMS["grid_features"] = (grid_features, lambda: _args(81, 2) + (0.4,) + _args(82, 5), (0, 1, 2))
NUMBA_SUBSET += ["quantile_regression", "grid_features"]


def repeats_by_element(x):
    return np.sum(np.repeat(x, np.array([1, 2, 1])))


def triangle_of_3d(x):
    return np.sum(np.triu(x[None]))


def percentile_nearest(x):
    return np.percentile(x, 50, method="nearest")


def median_of_two_axes(x):
    return np.median(x[None], axis=(0, 1))


def percentile_at_a_value(x, q):
    return np.percentile(x, q)


def cov_with_frequency_weights(x):
    return np.sum(np.cov(x, fweights=np.ones(3)))


@pytest.mark.parametrize("fn,args,needle", [
    (repeats_by_element, _args(83, 3), "np.repeat supports one integer repeat count"),
    (triangle_of_3d, _args(84, (3, 3)), "np.triu is supported for 2-d arrays"),
    (percentile_nearest, _args(85, 3), "method='linear'"),
    (median_of_two_axes, _args(86, 3), "along several axes at once are not supported"),
    (percentile_at_a_value, _args(87, 3) + (50.0,), "q must be a constant number"),
    (cov_with_frequency_weights, _args(88, 3), "keyword argument 'fweights' of cov() is not supported"),
])
def test_unsupported_building_and_statistics_forms_are_located_errors(fn, args, needle):
    with pytest.raises(adcompile.AdCompileError) as info:
        adcompile.grad(adcompile.compile(fn, backend="python"))(*args)
    assert needle in str(info.value) and THIS_FILE in str(info.value)


def split_in_halves(x):
    first, second = np.split(x, 2)
    return first * second


def test_split_into_unequal_sections_raises_as_numpy():
    compiled = adcompile.compile(split_in_halves, backend="python")
    with pytest.raises(ValueError, match="equal division"):
        compiled(np.ones(5))
    np.testing.assert_allclose(compiled(np.arange(6.0)), split_in_halves(np.arange(6.0)))


# Every program also runs on numba, the default backend: the subset above in the default run, the
# rest in the long profile (``pytest -m slow``), since each costs seconds of numba compilation.
NUMBA_LONG_PROFILE = {"max_drawdown_penalty", "whitened_gaussian_nll", "focal_loss", "negative_binomial_nll",
                      "student_t_nll", "label_smoothed_softmax", "grid_features", "gaussian_mixture_log_likelihood"}
CASES = [(name, "python") for name in PROGRAMS] + [
    pytest.param(name, "numba", marks=[] if name in NUMBA_SUBSET and name not in NUMBA_LONG_PROFILE
                 else [pytest.mark.slow])
    for name in PROGRAMS]


@pytest.mark.parametrize("name,backend", CASES)
def test_program_forward_and_gradient(name, backend):
    fn, make_args, wrt = PROGRAMS[name]
    args = make_args()
    compiled = adcompile.compile(fn, backend=backend)
    expected = fn(*args)
    np.testing.assert_allclose(compiled(*args), expected, rtol=1e-10, atol=1e-12)
    assert adcompile.gradcheck(compiled, args, wrt=wrt)
    if backend == "python":  # value_and_grad agrees with grad (numba: one compile less)
        value, grads = adcompile.value_and_grad(compiled, wrt=wrt)(*args)
        np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-12)
        for g, h in zip(grads, adcompile.grad(compiled, wrt=wrt)(*args)):
            np.testing.assert_allclose(g, h, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------------------ constructs added for these programs
def masked_updates(x, y):
    z = x * 2.0
    z[y > 0] = 1.5
    z[x < 0] += 3.0
    z[x > 1] *= x[0, 0]
    return np.sum(z ** 2 * y)


def nested_def_late_binding(x, k):
    scale = 2.0

    def g(v, p=3.0):
        if v[0] > 0:
            return np.sum(v ** 2) * scale + p
        return np.sum(v) * k

    s = g(x) + g(x * 2, p=k)
    scale = 5.0  # Python closures see the enclosing variable's value at the call
    return s + g(x + 1.0)


def cross_rows(a, b):
    return np.sum(np.cross(a, b) ** 2) + np.sum(np.cross(a[0], b) * 1.5)


def diffs(x):
    return np.sum(np.diff(x, axis=0) ** 2) + np.sum(np.diff(x, 2) ** 2) + np.sum(np.diff(x, n=1, axis=1))


def unpack_rows(pts, w):
    s = 0.0
    for x, y in pts:
        s += w[0] * x ** 2 + w[1] * np.sin(y)
    a, b = w
    return s * a + b


def nested_array_literal(x):
    M = np.array([[1, x], [0, 2.0]])
    return np.sum(M @ M)


def alias_then_fresh_copy(x):
    u = x.copy()
    s = 0.0
    for _ in range(3):
        u[0] = u[0] * 2.0 + u[1]
        s += np.sum(u ** 2)
        v = u
        u = v.copy()  # the next write goes into the copy: v's memory is not written
        s += v[1]
    return s


def view_of_replaced_array(x):
    u = x.copy()
    s = 0.0
    for k in range(3):
        v = u[1:]
        u = u * 1.0
        u[1] = x[0] * k
        s += np.sum(v ** 2) + np.sum(u)
    return s


def float32_parameter_widened_in_loop(x):
    for i in range(2):
        x = 0.5 * x + np.cos(np.sum(np.zeros(2)))  # a float64 scalar: x becomes float64
    return np.sum(x * x)


@pytest.mark.parametrize("fn,args", [
    (alias_then_fresh_copy, (np.array([0.3, -0.5, 0.8]),)),
    (view_of_replaced_array, (np.array([0.3, -0.5, 0.8]),)),
    (float32_parameter_widened_in_loop, (np.array([0.5, -1.0, 2.0], dtype=np.float32),)),
    (masked_updates, _args(50, (3, 4), (3, 4))),
    (nested_def_late_binding, (np.array([1.0, 2.0]), 0.7)),
    (nested_def_late_binding, (np.array([-3.0, 2.0]), 0.7)),
    (cross_rows, _args(51, (4, 3), (4, 3))),
    (diffs, _args(52, (4, 5))),
    (unpack_rows, _args(53, (4, 2), 2)),
    (nested_array_literal, (0.3,)),
])
def test_added_construct(fn, args):
    compiled = adcompile.compile(fn, backend="python")
    np.testing.assert_allclose(compiled(*args), fn(*args), rtol=1e-12)
    assert adcompile.gradcheck(compiled, args)


# ------------------------------------------------------------------ out of scope: clear errors
def uses_mask_read(x):
    return np.sum(x[x > 0, None])


def uses_mask_array_assign(x):
    z = x.copy()
    z[x > 0] = x
    return np.sum(z)


def uses_list_append(x):
    out = []
    out.append(x[0])
    return out[0]


def uses_generator(x):
    return sum(v ** 2 for v in x)


def uses_sort_kind(x):
    return np.sum(np.sort(x, kind="stable")[-2:])


def uses_matrix_3_norm(X):
    return np.linalg.norm(X, 3)


def uses_dict(x):
    p = {1: 1.0}  # dict literals need constant string keys
    return p[1] * np.sum(x)


def uses_recursive_local(x):
    def rec(v):
        return rec(v)
    return rec(x)


def uses_aliased_write(x, n):
    u = x.copy()
    s = 0.0
    for k in range(n):
        if k > 0:
            u = np.zeros(3)
        v = u
        u[0] = x[1]  # v sees this write: arrays are differentiated as values, so rejected
        s += v[0]
    return s


def uses_two_ellipses(x):
    return np.sum(x[..., ...])


@pytest.mark.parametrize("fn,args,needle", [
    (uses_mask_read, _args(61, 4), "boolean mask must be the only index"),
    (uses_mask_array_assign, _args(62, 4), "boolean-mask assignment"),
    (uses_list_append, _args(63, 4), "append"),
    (uses_generator, _args(64, 4), "generator expressions"),
    (uses_sort_kind, _args(65, 4), "keyword argument 'kind' of sort() is not supported"),
    (uses_dict, _args(70, 3), "constant string keys"),
    (uses_matrix_3_norm, _args(72, (3, 3)), "np.linalg.norm supports ord=1, 2, inf, -inf of vectors"),
    (uses_recursive_local, (1.0,), "recursive call (rec -> rec)"),
    (uses_two_ellipses, _args(71, (2, 2)), "single ellipsis"),
    (uses_aliased_write, (np.array([0.3, -0.5, 0.8]), 3), "which shares its memory"),
])
def test_out_of_scope_construct_is_a_located_error(fn, args, needle):
    with pytest.raises(adcompile.AdCompileError) as info:
        adcompile.grad(adcompile.compile(fn, backend="python"))(*args)
    message = str(info.value)
    assert needle in message
    assert THIS_FILE in message and "line" in message


def test_unpacking_an_array_of_the_wrong_length_raises():
    compiled = adcompile.compile(beale, backend="python")
    assert compiled(np.array([2.0, 3.0])) == beale(np.array([2.0, 3.0]))
    with pytest.raises(ValueError):
        compiled(np.array([1.0, 2.0, 3.0]))
