"""A module tree's arrays in order: its flat leaves and their identifiers.

A function of a Module is compiled as a function of these arrays (``module_compiler/``), whose
attribute reads ``module_values.py`` translates into the leaves' parameters.
"""


def module_leaves(module):
    """(flat name, holder, array) per parameter and buffer: a Parameter is its own holder,
    a buffer array holds itself."""
    leaves = [(flat_name(name), param, param.data) for name, param in module.named_parameters()]
    leaves += [(flat_name(name), buffer, buffer) for name, buffer in module.named_buffers()]
    return leaves


def flat_name(dotted):
    """An identifier for a dotted parameter name: ``fc1.weight`` -> ``fc1_weight``, and the
    numbered children of a Sequential ``0.weight`` -> ``layer0_weight``."""
    parts = [("layer" + part) if part.isdigit() else part for part in dotted.split(".")]
    return "_".join(parts)
