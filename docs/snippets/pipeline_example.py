"""The small function whose IR docs/how-it-works.md shows at every stage."""
import numpy as np


def softplus_sum(x, k):
    s = 0.0
    for i in range(x.shape[0]):
        s += np.log(1.0 + np.exp(k * x[i]))
    return s
