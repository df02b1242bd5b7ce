"""Handlers for gathers and scatters: np.take, np.take_along_axis, np.add.at, np.bincount,
np.triu_indices/np.tril_indices, and the reads ``x[mask]`` (see ``calls.py``)."""
