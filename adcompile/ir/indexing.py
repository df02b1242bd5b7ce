"""Index expressions (``x[i, 1:, ::2]``, ``x[None]``, ``W[idx]``) in the IR.

An index is a list of items, each ``('int', a)``, ``('slice', start, stop, step)`` (parts
may be None), ``('none',)`` or ``('array', a)`` where the letters are IR atoms. In a
``getitem`` Assign the atoms are arguments and the items hold their argument positions; a
``SetItem`` holds the items with the atoms themselves.
"""
from ..errors import TypeMismatchError

FULL_SLICE = ("slice", None, None, None)  # the item of ``x[:]``: a whole axis


def result_ndim(x_type, items):
    consumed = sum(1 for item in items if item[0] in ("int", "slice", "array"))
    if consumed > x_type.ndim:
        raise TypeMismatchError(f"too many indices ({consumed}) for a {x_type.ndim}-d array")
    produced = sum(1 for item in items if item[0] in ("slice", "none"))
    arrays = [item[1].type.ndim for item in items if item[0] == "array"]
    return x_type.ndim - consumed + produced + (max(arrays) if arrays else 0)


def positioned_items(items, position_of):
    """``items`` with each atom replaced by ``position_of(atom)`` (absent parts stay None)."""
    return [(item[0], *[None if part is None else position_of(part) for part in item[1:]]) for item in items]


def index_params(x_type, items):
    """Params of a ``getitem`` of a value of ``x_type`` and its index argument atoms."""
    index_args = []

    def argument_position(atom):
        index_args.append(atom)
        return len(index_args)  # position in the Assign's args (x is 0)

    positioned = positioned_items(items, argument_position)
    params = {"items": tuple(positioned), "result_ndim": result_ndim(x_type, items),
              "text": index_text(positioned)}
    return params, index_args


def items_with_atoms(positioned, args):
    return [(item[0], *[None if p is None else args[p] for p in item[1:]]) for item in positioned]


def index_text(positioned, name=lambda p: f"_{p}"):
    """Source text of an index whose parts are named by ``name(part)``."""
    texts = []
    for item in positioned:
        kind = item[0]
        if kind in ("int", "array"):
            texts.append(name(item[1]))
        elif kind == "none":
            texts.append("None")
        else:
            start, stop, step = (("" if p is None else name(p)) for p in item[1:])
            texts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
    if len(texts) == 1 and positioned[0][0] != "slice":
        return texts[0]
    return ", ".join(texts) if texts else "()"

