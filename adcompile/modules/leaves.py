"""A module tree's arrays in order: its flat leaves, each with its dotted name.

A function of a Module is compiled as a function of these arrays (``module_compiler/``), whose
attribute reads ``module_compiler/values.py`` translates into the leaves' parameters. There,
a leaf is named after the argument and its path (``model.layers.0.weight`` of the argument
``model``: ``model_layers_0_weight``, ``adcompile.tree.path_name``).
"""


def module_leaves(module):
    """(dotted name, holder, array) per parameter and buffer: a Parameter is its own holder,
    a buffer array holds itself."""
    leaves = [(name, param, param.data) for name, param in module.named_parameters()]
    leaves += [(name, buffer, buffer) for name, buffer in module.named_buffers()]
    return leaves

