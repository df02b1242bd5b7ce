"""Activity analysis: which variables need a derivative.

A variable is *varied* if it depends differentiably on a differentiated input, and *useful*
if a result depends differentiably on it; it is *active* if both. Only active variables get
adjoints (reverse mode) or tangents (forward mode). The analysis is per variable name and
flow-insensitive, so it is a sound over-approximation across loops and branches.

    x = a * 2.0        # a varied -> x varied
    n = x.shape[0]     # dim is not differentiable -> n never varied
    return x * c       # x useful; c useful but not varied -> c inactive
"""
from ..ir.nodes import Assign, CustomCall, Pop, Push, SetItem, Var, walk
from ..ir.primitives import primitive


def _differentiable(stmt, non_differentiable):
    if non_differentiable is not None:  # the transforms still pass the old name set
        return stmt.prim not in non_differentiable
    return primitive(stmt.prim).is_differentiable


def _flows(block, non_differentiable):
    """(source var, destination var) pairs: a derivative can flow from source to destination."""
    pairs = []
    for stmt in walk(block):
        if isinstance(stmt, Assign):
            if stmt.target.type.is_float and _differentiable(stmt, non_differentiable):
                pairs += [(a, stmt.target) for a in primitive(stmt.prim).differentiated_args(stmt.args)
                          if isinstance(a, Var) and a.type.is_float]
        elif isinstance(stmt, SetItem):  # includes AccumItem
            if isinstance(stmt.value, Var) and stmt.value.type.is_float:
                pairs.append((stmt.value, stmt.array))
        elif isinstance(stmt, Push):
            if isinstance(stmt.value, Var):
                pairs.append((stmt.value, stmt.tape))
        elif isinstance(stmt, CustomCall):
            pairs += [(a, out) for a in stmt.reads() if a.type.is_float
                      for out in stmt.outputs if out.type.is_float]
        elif isinstance(stmt, Pop):
            pairs.append((stmt.tape, stmt.target))
    return pairs


def _closure(seeds, edges):
    reached = set(seeds)
    frontier = list(seeds)
    while frontier:
        node = frontier.pop()
        for nxt in edges.get(node, ()):
            if nxt not in reached:
                reached.add(nxt)
                frontier.append(nxt)
    return reached


def active_vars(block, inputs, outputs, non_differentiable=None):
    """The set of Vars (by identity) that are varied by ``inputs`` and useful to ``outputs``."""
    forward, backward = {}, {}
    for src, dst in _flows(block, non_differentiable):
        forward.setdefault(src, []).append(dst)
        backward.setdefault(dst, []).append(src)
    varied = _closure([v for v in inputs if v.type.is_float], forward)
    useful = _closure([v for v in outputs if isinstance(v, Var) and v.type.is_float], backward)
    return varied & useful
