"""``vmap`` with pytree arguments: the vmap of the flat function, ``in_axes`` per leaf.

An entry of ``in_axes`` for a pytree argument is 0, None, or a tree prefix of the argument
(JAX's rule: ``{"W": None, "b": 0}`` for a dict with those keys, each value applying to the
whole subtree below it); it is spread to one axis per leaf, and the flat function (or flat
derived function, for ``vmap(grad(f))``) is vectorised over those leaves. Gradients with
respect to a pytree come back in its structure, each leaf with the batch axis in front.
"""
from ..errors import CallError
from ..tree import flatten, is_container
from ..tree.registry import node_type


def spread_axes(prefix, value, where):
    """One axis (0 or None) per leaf of ``value`` from ``prefix``, a tree prefix of it."""
    if prefix is None or (isinstance(prefix, int) and not isinstance(prefix, bool) and prefix == 0):
        return [prefix] * len(flatten(value)[0])
    node, prefix_node = node_type(value), node_type(prefix)
    if node is None or prefix_node is not node:
        raise CallError(f"vmap: in_axes {where} is {prefix!r}, which is not a prefix of the argument's structure "
                        "(use 0, None, or a tree of them with the argument's keys)")
    children, aux = node.flatten(value)
    prefix_children, prefix_aux = node.flatten(prefix)
    if aux != prefix_aux or len(children) != len(prefix_children):
        raise CallError(f"vmap: in_axes {where} has the keys {prefix_aux!r}, the argument {aux!r}"
                        if aux != prefix_aux else f"vmap: in_axes {where} has {len(prefix_children)} entries, "
                        f"the argument {len(children)}")
    keys = node.keys(aux, len(children))
    return [axis for key, child, sub in zip(keys, children, prefix_children)
            for axis in spread_axes(sub, child, f"{where}[{key!r}]")]


def flat_in_axes(fn, args):
    """The in_axes of the flat function: one entry per flat argument."""
    in_axes = fn.in_axes if fn.in_axes != 0 else (0,) * len(args)
    axes = []
    for name, axis, value in zip(fn.param_names, in_axes, args):
        if is_container(value):
            axes += spread_axes(axis, value, f"for '{name}'")
        elif is_container(axis):
            raise CallError(f"vmap: in_axes for '{name}' is a tree, but the argument is not")
        else:
            axes.append(axis)
    return tuple(axes)


def is_vectorized(fn):
    """Whether ``fn`` is a ``vmap`` (``derivatives/vmapping.py``, a layer up: known by its in_axes)."""
    return getattr(fn, "in_axes", None) is not None


def plan_vmap(fn, args, plan_base):
    """``run(flat arguments, extra)`` for ``vmap(base)`` called with pytree arguments:
    ``plan_base(base, args)`` gives the flat function of the base and the regrouping of its
    results, applied to the vectorised results."""
    if not is_vectorized(fn):
        return None
    flat_base, regroup = plan_base(fn.base, args)
    mapped = fn.mapped_over(flat_base, flat_in_axes(fn, args))
    return lambda flat_args, extra: regroup(mapped.run(flat_args, extra))
