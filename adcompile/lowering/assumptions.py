"""Dims a fused group assumes equal, to be checked at run time before its loop runs.

numpy broadcasting lets ``y * p`` combine a ``y`` of length ``y.shape[0]`` with a ``p`` of
length ``X.shape[0]``: the shapes cannot prove the two equal (``y`` might have length 1), but
they almost always are. A group may assume two dims equal when both can be computed from the
parameters; the lowering then writes ``if y.shape[0] == X.shape[0]: <fused loop> else:
<the statements as they were>``. The assumed dims form equivalence classes (union-find).

Only plausible equalities are assumed: the lengths of two different parameters' axes, or a
broadcast's length (``max(X.shape[0], y.shape[0])``) and one of the lengths it broadcasts (or
a broadcast of some of them, ``max(X.shape[0], y.shape[0], z.shape[0])`` and ``max(X.shape[0],
y.shape[0])``), a constant among them (``v[3:6] * np.array([a, b, c])``: ``max(3, min(6,
v.shape[0]) - 3)`` and 3, where a statement broadcasts them together), and the lengths of
slices with constant bounds, which are the bounds' length unless the array is too short:
``min(6, v.shape[0]) - 3`` and 3 or ``min(3, v.shape[0])`` (also as members of a broadcast,
so that an observation's 3-vectors share one loop); never two axes of one parameter
otherwise, nor ``n`` and ``n - 1``.
"""
import re

_PARAMETER_AXIS = re.compile(r"(\w+)\.shape\[\d+\]")


class DimAssumptions:
    def __init__(self, shapes):
        self.shapes = shapes
        self.parent = {}
        self.pairs = []  # (dim, dim) merged, in order: each needs one run-time comparison

    def find(self, dim):
        while self.parent.get(dim, dim) != dim:
            dim = self.parent[dim]
        return dim

    def trial(self):
        """A copy to try a statement's assumptions on; ``adopt`` it if the statement joins."""
        copy = DimAssumptions(self.shapes)
        copy.parent, copy.pairs = dict(self.parent), list(self.pairs)
        return copy

    def adopt(self, trial):
        self.parent, self.pairs = trial.parent, trial.pairs

    def same(self, a, b, across_parameters=True):
        """Whether ``a`` and ``b`` are equal, or may be assumed equal (recording it).
        ``across_parameters``: two different parameters' lengths may be assumed equal (where
        one statement broadcasts them together), not only a broadcast and its members."""
        if a == b or self.find(a) == self.find(b):
            return True
        if a.constant is not None and b.constant is not None:
            return False
        if a.constant is not None or b.constant is not None:
            constant, other = (a, b) if a.constant is not None else (b, a)
            if constant.constant not in _constant_slice_lengths(self.shapes.source(other)) and (
                    not across_parameters  # else only where a statement broadcasts it (below)
                    or not _plausibly_equal(self.shapes.source(a), self.shapes.source(b))):
                return False
        elif not (_plausibly_equal(self.shapes.source(a), self.shapes.source(b), across_parameters)
                  or _constant_slice_lengths(self.shapes.source(a)) & _constant_slice_lengths(self.shapes.source(b))):
            return False
        self.parent[self.find(a)] = self.find(b)
        self.pairs.append((a, b))
        return True

    def same_domain(self, a, b):
        """Whether a statement over domain ``a`` may join a loop over ``b``: lengths equal, or
        a broadcast's length and the lengths it broadcasts. Two unrelated parameters' lengths
        are not assumed equal only to share a loop (``dx * 0.5`` of length ``x.shape[0]``
        next to a loop over ``A.shape[0]``): no statement combines them, so the check would
        only fail at run time and leave the loop unused."""
        return len(a) == len(b) and all(self.same(x, y, across_parameters=False) for x, y in zip(a, b))


def _plausibly_equal(a, b, across_parameters=True):
    if a is None or b is None:
        return False
    axis_a, axis_b = _PARAMETER_AXIS.fullmatch(a), _PARAMETER_AXIS.fullmatch(b)
    if axis_a and axis_b:
        return across_parameters and axis_a.group(1) != axis_b.group(1)
    members_a, members_b = _broadcast_members(a), _broadcast_members(b)
    return members_a <= members_b or members_b <= members_a


_CONSTANT_SLICE = re.compile(r"min\((\d+), \w+\.shape\[\d+\]\)(?: - (\d+))?")


def _constant_slice_lengths(text):
    """The lengths k such that ``text`` is the length of a slice with constant bounds, k unless
    the array is too short (``v[3:6]``: ``min(6, v.shape[0]) - 3``), or a broadcast of such a
    length and others (``max(min(6, c.shape[1]) - 3, p.shape[1])``, a point minus a camera's
    centre). A loop over k, or over another such length of k (``min(3, c.shape[1])``, the
    camera's rotation), may take the statement, behind the run-time check that they are equal."""
    lengths = set()
    for member in _broadcast_members(text) if text is not None else ():
        match = _CONSTANT_SLICE.fullmatch(member)
        if match:
            lengths.add(int(match.group(1)) - int(match.group(2) or 0))
    return lengths


def _broadcast_members(text):
    """The lengths a broadcast's length is the largest of (``max(m.shape[1], x.shape[1])``,
    where a broadcast of broadcasts lists them all), or the length itself. A member may hold
    commas of its own (``min(3, v.shape[0])``): the text is split at its top-level commas."""
    if not (text.startswith("max(") and text.endswith(")")):
        return {text}
    members, depth, start = set(), 0, 4
    for position, character in enumerate(text[4:-1], start=4):
        depth += {"(": 1, ")": -1}.get(character, 0)
        if depth < 0:  # max(a) + max(b): not one broadcast
            return {text}
        if character == "," and depth == 0:
            members.add(text[start:position].strip())
            start = position + 1
    members.add(text[start:-1].strip())
    return members
