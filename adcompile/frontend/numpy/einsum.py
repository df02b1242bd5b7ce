"""np.einsum, np.tensordot and np.kron, lowered at compile time from their static subscripts.

Each operand is labelled with one letter per axis; the lowering uses transposes, matmuls,
broadcast products and sums only, so every derivative follows from those primitives:

* a letter repeated in a 2-d operand (``ii``) is its diagonal (np.diag) or trace;
* a letter of one operand that no other operand and not the output has is summed first;
* two operands are combined by a matmul when at most one letter of each kind is left (the
  batch letter, kept and in both; the contracted one; one kept letter of each side), as in
  ``ij,jk->ik``, ``ni,nj->ij``, ``bij,bjk->bik``; otherwise (and for a batch of dot products,
  ``bi,bi->b``) by a broadcast product summed over the contracted letters (``ij,ij->``,
  ``i,j->ij``);
* more operands are combined left to right; the result is transposed to the output order.

An ellipsis (``...``) stands for the axes not named, aligned from the right across the
operands as numpy broadcasts them: it is replaced by fresh letters, one per axis
(``...ij,...jk->...ik`` is ``Aij,Ajk->Aik`` for 3-d operands), put first in an implicit output.
Other repeated letters than ``ii`` of a 2-d operand are rejected with a located error.
"""
from ...errors import TypeMismatchError, UnsupportedFunctionError
from ...ir.builder import const
from ..calls import array_arg, atom, handler, static_int
from ..static_values import StaticStr
from ..values import TupleValue
from ...ir.indexing import FULL_SLICE



class _Lowering:
    """Emits the primitives of one einsum; ``terms`` are (atom, letters) pairs."""

    def __init__(self, tr, node):
        self.tr, self.node = tr, node

    def emit(self, prim, args, **params):
        return self.tr.emit(prim, args, self.node, **params)

    def fail(self, message):
        return self.tr.error(f"np.einsum: {message}", self.node, UnsupportedFunctionError)

    def transposed(self, x, letters, order):
        """``x`` with its axes (labelled ``letters``) in the order ``order``."""
        perm = tuple(letters.index(c) for c in order)
        if perm == tuple(range(len(perm))):
            return x
        if perm == (1, 0):
            return self.emit("transpose", [x])
        return self.emit("transpose", [x], axes=perm)

    def summed(self, x, letters, drop):
        """``x`` summed over the axes of the letters ``drop``; the letters left."""
        if not drop:
            return x, letters
        if len(drop) == len(letters):
            return self.emit("sum", [x]), ""
        for k in sorted((letters.index(c) for c in drop), reverse=True):
            x = self.emit("sum", [x], axis=k)
        return x, "".join(c for c in letters if c not in drop)

    def diagonal(self, x, letters):
        """A 2-d operand labelled ``ii``: its diagonal, labelled ``i``."""
        repeated = [c for c in set(letters) if letters.count(c) > 1]
        if not repeated:
            return x, letters
        if len(letters) != 2:
            raise self.fail(f"the repeated subscript in '{letters}' is supported for 2-d operands ('ii') only")
        return self.emit("diag", [x]), letters[0]

    def pair(self, a, la, b, lb, keep):
        """The contraction of two operands, keeping the letters in ``keep``."""
        batch = [c for c in la if c in lb and c in keep]
        contracted = [c for c in la if c in lb and c not in keep]
        left = [c for c in la if c not in lb]
        right = [c for c in lb if c not in la]
        if len(contracted) == 1 and max(len(batch), len(left), len(right)) <= 1 and (left or right or not batch):
            return self.by_matmul(a, la, b, lb, batch, contracted, left, right)
        order = batch + left + right + contracted
        product = self.emit("mul", [self.aligned(a, la, order), self.aligned(b, lb, order)])
        return self.summed(product, "".join(order), contracted)

    def aligned(self, x, letters, order):
        """``x`` transposed to ``order`` with length-1 axes for the letters it lacks."""
        x = self.transposed(x, letters, [c for c in order if c in letters])
        for k, c in enumerate(order):
            if c not in letters:
                x = self.emit("expand_axis", [x], axis=k)
        return x

    def by_matmul(self, a, la, b, lb, batch, contracted, left, right):
        a = self.transposed(a, la, batch + left + contracted)
        b = self.transposed(b, lb, batch + contracted + right)
        if batch and not left:  # (n, c) -> (n, 1, c): a stack of rows
            a = self.emit("expand_axis", [a], axis=1)
        if batch and not right:  # (n, c) -> (n, c, 1): a stack of columns
            b = self.emit("expand_axis", [b], axis=2)
        product = self.emit("matmul", [a, b])
        if batch and not (left and right):
            items = [FULL_SLICE, FULL_SLICE, FULL_SLICE]
            if not right:
                items[2] = ("int", const(0))
            if not left:
                items[1] = ("int", const(0))
            product = self.tr.getitem(product, items, self.node)
        return product, "".join(batch + left + right)

    def lower(self, operands, inputs, output):
        if len(inputs) == 1 and len(inputs[0]) == 2 and inputs[0][0] == inputs[0][1] and not output:
            return self.emit("trace", [operands[0]])
        terms = [self.diagonal(x, letters) for x, letters in zip(operands, inputs)]
        for k, (x, letters) in enumerate(terms):
            others = output + "".join(l for j, (_, l) in enumerate(terms) if j != k)
            terms[k] = self.summed(x, letters, [c for c in letters if c not in others])
        x, letters = terms[0]
        for k in range(1, len(terms)):
            keep = output + "".join(l for _, l in terms[k + 1:])
            x, letters = self.pair(x, letters, terms[k][0], terms[k][1], keep)
        x, letters = self.summed(x, letters, [c for c in letters if c not in output])
        return self.transposed(x, letters, output)


def parse_subscripts(tr, spec, ndims, node):
    """The letters of each operand and of the output of an einsum subscript string."""
    def fail(message):
        return tr.error(f"np.einsum: {message} in '{spec}'", node, UnsupportedFunctionError)

    text = spec.replace(" ", "")
    lhs, arrow, output = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise fail(f"{len(inputs)} operand subscript(s) for {len(ndims)} operand(s)")
    if "." in text:
        inputs, output = _without_ellipses(tr, spec, inputs, output if arrow else None, ndims, node)
        arrow = "->"
    if not all(c.isalpha() for c in "".join(inputs) + output):
        raise fail("subscripts must be letters")
    for letters, ndim in zip(inputs, ndims):
        if len(letters) != ndim:
            raise tr.error(f"np.einsum: subscripts '{letters}' for a {ndim}-d operand in '{spec}'", node,
                           TypeMismatchError)
    every = "".join(inputs)
    if not arrow:
        output = "".join(sorted(c for c in set(every) if every.count(c) == 1))
    if len(set(output)) != len(output) or any(c not in every for c in output):
        raise fail("each output subscript must appear once, and in an operand")
    return inputs, output


def _without_ellipses(tr, spec, inputs, output, ndims, node):
    """The subscripts with each ``...`` replaced by fresh letters for the axes it stands for
    (the output, when not given, is numpy's implicit one: those letters first)."""
    def fail(message, cls=UnsupportedFunctionError):
        return tr.error(f"np.einsum: {message} in '{spec}'", node, cls)

    for letters in inputs + ([output] if output is not None else []):
        if letters.count("...") > 1 or "." in letters.replace("...", ""):
            raise fail("an operand's subscripts may hold one ellipsis '...' and no other dots")
    spans = []
    for letters, ndim in zip(inputs, ndims):
        named = len(letters) - (3 if "..." in letters else 0)
        spans.append(ndim - named if "..." in letters else 0)
        if named > ndim or ("..." not in letters and named != ndim):
            raise fail(f"subscripts '{letters}' for a {ndim}-d operand", TypeMismatchError)
    widest = max(spans)
    fresh = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in spec][:widest]
    inputs = [letters.replace("...", "".join(fresh[widest - span:])) for letters, span in zip(inputs, spans)]
    if output is None:
        every = "".join(inputs)
        return inputs, "".join(fresh) + "".join(sorted(c for c in set(every) if every.count(c) == 1
                                                       and c not in fresh))
    if "..." not in output and widest:
        raise fail("the output needs '...' for the axes the operands' ellipses stand for", TypeMismatchError)
    return inputs, output.replace("...", "".join(fresh))


def _einsum(tr, spec, operands, node):
    inputs, output = parse_subscripts(tr, spec, [x.type.ndim for x in operands], node)
    return _Lowering(tr, node).lower(operands, inputs, output)


@handler("np.einsum")
def _einsum_handler(tr, args, kwargs, node):
    for key in kwargs:
        if key != "optimize":  # optimize= only chooses an order of evaluation
            raise tr.error(f"keyword argument '{key}' of np.einsum() is not supported by adcompile", node,
                           UnsupportedFunctionError)
    if not args or not isinstance(args[0], StaticStr):
        raise tr.error("np.einsum needs a constant subscript string as its first argument", node,
                       UnsupportedFunctionError)
    operands = [atom(tr, v, node) for v in args[1:]]
    if not operands:
        raise tr.error("np.einsum needs operands", node, TypeMismatchError)
    return _einsum(tr, args[0].value, operands, node)


def _axes_list(tr, value, node):
    if isinstance(value, TupleValue):
        return [static_int(tr, v, node, "np.tensordot axes") for v in value.items]
    return [static_int(tr, value, node, "np.tensordot axes")]


@handler("np.tensordot")
def _tensordot(tr, args, kwargs, node):
    if len(args) > 3 or any(key != "axes" for key in kwargs):
        raise tr.error("np.tensordot takes (a, b, axes) only", node, UnsupportedFunctionError)
    a, b = (array_arg(tr, v, node) for v in args[:2])
    axes = args[2] if len(args) > 2 else kwargs.get("axes", const(2))
    if isinstance(axes, TupleValue):
        if len(axes.items) != 2:
            raise tr.error("np.tensordot axes must be an int or a pair of axis lists", node, TypeMismatchError)
        axes_a, axes_b = (_axes_list(tr, v, node) for v in axes.items)
    else:
        n = static_int(tr, axes, node, "np.tensordot axes")
        axes_a, axes_b = list(range(a.type.ndim - n, a.type.ndim)), list(range(n))
    axes_a = [k % a.type.ndim for k in axes_a]
    axes_b = [k % b.type.ndim for k in axes_b]
    if len(axes_a) != len(axes_b):
        raise tr.error("np.tensordot: the two axis lists differ in length", node, TypeMismatchError)
    letters_a = "abcdefgh"[:a.type.ndim]
    letters_b = list("ijklmnop"[:b.type.ndim])
    for ka, kb in zip(axes_a, axes_b):
        letters_b[kb] = letters_a[ka]
    letters_b = "".join(letters_b)
    output = "".join(c for k, c in enumerate(letters_a) if k not in axes_a) + \
        "".join(c for k, c in enumerate(letters_b) if k not in axes_b)
    return _einsum(tr, f"{letters_a},{letters_b}->{output}", [a, b], node)


@handler("np.kron")
def _kron(tr, args, kwargs, node):
    if len(args) != 2 or kwargs:
        raise tr.error("np.kron takes two arrays", node, UnsupportedFunctionError)
    a, b = (array_arg(tr, v, node) for v in args)
    if (a.type.ndim, b.type.ndim) == (1, 1):
        return tr.emit("ravel", [_einsum(tr, "i,j->ij", [a, b], node)], node)
    if (a.type.ndim, b.type.ndim) != (2, 2):
        raise tr.error("np.kron is supported for two 1-d or two 2-d arrays", node, UnsupportedFunctionError)
    blocks = _einsum(tr, "ij,kl->ikjl", [a, b], node)

    def dim(x, k):
        return tr.emit("dim", [x], node, axis=k)

    rows = tr.emit("mul", [dim(a, 0), dim(b, 0)], node)
    cols = tr.emit("mul", [dim(a, 1), dim(b, 1)], node)
    return tr.emit("reshape", [blocks, rows, cols], node)
