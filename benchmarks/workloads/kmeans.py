"""k-means' cost written the numba way: for each point a scalar loop over the centres keeps a
running minimum of squared distances, and the minima are summed. Gradient with respect to the
centres and the points (the minimum's branch is taped per point).
"""
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads.peer_calls import jax_implementation

NAME = "kmeans"
TITLE = "k-means cost, running minimum"
SIZES = {"tiny": {"points": 20, "centres": 3, "dimensions": 2},
         "full": {"points": 5000, "centres": 10, "dimensions": 3}}
NOTE = "forward: sum over points of the squared distance to the nearest centre; gradient: w.r.t. centres and points."
PARAMETERS = (0, 1)


def kmeans_cost(centres, points):
    total = 0.0
    for i in range(points.shape[0]):
        nearest = np.inf
        for j in range(centres.shape[0]):
            distance = 0.0
            for d in range(points.shape[1]):
                difference = points[i, d] - centres[j, d]
                distance += difference * difference
            if distance < nearest:
                nearest = distance
        total += nearest
    return total


def make_inputs(size):
    points, centres, dimensions = SIZES[size].values()
    rng = np.random.default_rng(7)
    return rng.standard_normal((centres, dimensions)), rng.standard_normal((points, dimensions))


def adcompile_version(data):
    forward = compile_with_adcompile(kmeans_cost)
    gradient = adcompile.grad(forward, wrt=PARAMETERS)
    return Implementation("adcompile", "adcompile", lambda: forward(*data), lambda: gradient(*data))


def jax_version(data, jax):
    """As a JAX user writes it: all squared distances at once, the minimum along the centres."""
    jnp = jax.numpy

    def cost(centres, points):
        distances = jnp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=2)
        return jnp.sum(jnp.min(distances, axis=1))
    return jax_implementation(jax, cost, data, wrt=PARAMETERS)
