"""k-means' cost with a running minimum, shared by the zero-cotangent skip's tests and the golden
source: per point, only the nearest centre's distance receives a nonzero cotangent.
"""
import numpy as np


def nearest_centre_cost(centres, points):
    """k-means' cost with a running minimum: one centre per point receives a cotangent."""
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
