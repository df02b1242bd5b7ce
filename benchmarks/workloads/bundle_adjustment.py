"""Bundle adjustment's reprojection error (ADBench's objective) written the numba way: a loop
over observations calling helper functions on 3-vectors (a Rodrigues rotation, a projection
with radial distortion). Gradient with respect to the cameras and the points: small-array
reverse mode in a loop, the case of issue 25, item 6.
"""
import numpy as np

import adcompile
from harness import Implementation, compile_with_adcompile
from workloads.peer_calls import jax_implementation

NAME = "bundle_adjustment"
TITLE = "Bundle adjustment, per-observation loop"
SIZES = {"tiny": {"cameras": 3, "points": 8, "observations": 12},
         "full": {"cameras": 20, "points": 500, "observations": 4000}}
NOTE = "forward: sum of squared reprojection errors; gradient: with respect to cameras and points."
PARAMETERS = (0, 1)


def rodrigues_rotate(rotation, point):
    """``point`` rotated by the axis-angle 3-vector ``rotation``."""
    theta = np.sqrt(rotation[0] * rotation[0] + rotation[1] * rotation[1] + rotation[2] * rotation[2])
    axis = rotation / theta
    cos_theta, sin_theta = np.cos(theta), np.sin(theta)
    along = (axis[0] * point[0] + axis[1] * point[1] + axis[2] * point[2]) * (1.0 - cos_theta)
    cross = np.array([axis[1] * point[2] - axis[2] * point[1],
                      axis[2] * point[0] - axis[0] * point[2],
                      axis[0] * point[1] - axis[1] * point[0]])
    return point * cos_theta + cross * sin_theta + axis * along


def project(camera, point):
    """The image position of ``point`` seen by ``camera`` (rotation, centre, focal length,
    principal point, two radial distortion coefficients: 11 numbers)."""
    in_camera = rodrigues_rotate(camera[0:3], point - camera[3:6])
    u, v = in_camera[0] / in_camera[2], in_camera[1] / in_camera[2]
    radius_sq = u * u + v * v
    distortion = 1.0 + camera[9] * radius_sq + camera[10] * radius_sq * radius_sq
    return np.array([u * distortion * camera[6] + camera[7], v * distortion * camera[6] + camera[8]])


def reprojection_error(cameras, points, observations, camera_index, point_index):
    total = 0.0
    for i in range(observations.shape[0]):
        predicted = project(cameras[camera_index[i]], points[point_index[i]])
        du = predicted[0] - observations[i, 0]
        dv = predicted[1] - observations[i, 1]
        total += du * du + dv * dv
    return total


def make_inputs(size):
    cameras, points, observations = SIZES[size].values()
    rng = np.random.default_rng(5)
    camera_parameters = np.concatenate([0.3 * rng.standard_normal((cameras, 3)), rng.standard_normal((cameras, 3)),
                                        1.0 + 0.1 * rng.random((cameras, 1)), 0.1 * rng.standard_normal((cameras, 2)),
                                        0.01 * rng.standard_normal((cameras, 2))], axis=1)
    world_points = rng.standard_normal((points, 3)) + np.array([0.0, 0.0, 8.0])
    return (camera_parameters, world_points, rng.standard_normal((observations, 2)),
            np.arange(observations) % cameras, rng.integers(0, points, observations))


def adcompile_version(data):
    forward = compile_with_adcompile(reprojection_error)
    gradient = adcompile.grad(forward, wrt=PARAMETERS)
    return Implementation("adcompile", "adcompile", lambda: forward(*data), lambda: gradient(*data))


def jax_version(data, jax):
    """As a JAX user writes it: the per-observation projection ``vmap``-ed over the observations."""
    jnp = jax.numpy

    def rotate(rotation, point):
        theta = jnp.sqrt(jnp.sum(rotation * rotation))
        axis = rotation / theta
        along = jnp.dot(axis, point) * (1.0 - jnp.cos(theta))
        return point * jnp.cos(theta) + jnp.cross(axis, point) * jnp.sin(theta) + axis * along

    def project(camera, point):
        in_camera = rotate(camera[0:3], point - camera[3:6])
        u, v = in_camera[0] / in_camera[2], in_camera[1] / in_camera[2]
        radius_sq = u * u + v * v
        distortion = 1.0 + camera[9] * radius_sq + camera[10] * radius_sq * radius_sq
        return jnp.stack([u * distortion * camera[6] + camera[7], v * distortion * camera[6] + camera[8]])

    def error(cameras, points, observations, camera_index, point_index):
        predicted = jax.vmap(project)(cameras[camera_index], points[point_index])
        return jnp.sum((predicted - observations) ** 2)
    return jax_implementation(jax, error, data, wrt=PARAMETERS)
