"""``grad(f, has_aux=True)`` and ``value_and_grad(f, has_aux=True)``: ``f`` returns ``(loss, aux)``,
``aux`` any pytree of values (predictions, metrics) that is returned alongside but not
differentiated.

The derivative is reverse mode of ``f`` with ``loss`` as its only result; ``aux``'s leaves are
copied at the end of the forward sweep (so that the backward sweep, which restores values a
loop overwrote, cannot change them) and returned between the value and the gradients:
``value_and_grad`` code returns ``loss, *aux_leaves, *grads``, ``grad`` code ``*aux_leaves, *grads``.

``jacobian(f, has_aux=True)`` and ``hessian(f, has_aux=True)`` (JAX's): ``f`` returns ``(out, aux)``;
the matrix is of ``out``, and the code evaluates ``f`` once more after the matrix's loop for the
aux leaves, returned after the matrix: the user gets ``(matrix, aux)``.
"""
from ..errors import CallError
from ..ir.builder import Builder, Namer
from ..ir.clone import copy_function, inline_function
from ..ir.nodes import Var, walk
from ..transforms.derived_reverse import reversible
from ..transforms.forward import forward
from ..transforms.matrix_ir import matrix_ir
from ..transforms.reverse import reverse
from ..tree.structure import LEAF


def aux_structure(primal, name):
    """The TreeDef of ``aux`` in ``f``'s result ``(loss, aux)``; a clear error for another result."""
    structure = getattr(primal, "result_structure", None)
    if structure is not None:
        if structure.node.cls is not tuple or len(structure.children) != 2 or not structure.children[0].is_leaf:
            raise _not_a_pair(name, f"returns {structure}")
        return structure.children[1]
    if not primal.returns_tuple or len(primal.results) != 2:
        found = f"a tuple of {len(primal.results)}" if primal.returns_tuple else "one value"
        raise _not_a_pair(name, f"returns {found}")
    return LEAF


def _not_a_pair(name, found):
    return CallError(f"{name}: has_aux=True needs a function returning a pair (loss, aux), but it {found}; "
                     "return (loss, aux) with aux any value, tuple, list or dict to carry along")


def loss_function(primal, name):
    """(``f`` with ``loss`` its only result, aux leaves copied at its end, the copies, a namer
    that knows every name of it)."""
    aux_structure(primal, name)
    fn = copy_function(primal)
    namer = namer_knowing(fn)
    b = Builder(namer, fn.body)
    copies = []
    for atom in fn.results[1:]:
        if isinstance(atom, Var):
            copies.append(b.call("copy", atom) if atom.type.ndim else b.emit("alias", [atom]))
        else:
            copies.append(atom)
    fn.results, fn.returns_tuple = fn.results[:1], False
    return fn, copies, namer


def namer_knowing(fn):
    """A Namer that gives no name ``fn`` already uses."""
    namer = Namer()
    named = [a for stmt in walk(fn.body) for a in list(stmt.reads()) + list(stmt.writes())]
    for var in list(fn.params) + [a for a in named if isinstance(a, Var)]:
        namer.reserve(var.name)
    return namer


def matrix_with_aux(kind, primal, index, mode, name):
    """The IR of ``jacobian`` or ``hessian`` (``kind``) with ``has_aux``: the matrix of ``primal``'s
    first result (``out`` of ``(out, aux)``) with respect to parameter ``index``, then aux's leaves."""
    output, _, _ = loss_function(primal, name)
    if kind == "hessian":
        gradient = reverse(output, [index], Namer(), mode="grad")
        column = forward(gradient, [index], Namer())
        fn = matrix_ir(f"{primal.name}_hessian", gradient, index, "fwd", column, shape_source=index)
    else:
        mode = "rev" if mode == "rev" and reversible(output) else "fwd"
        line = reverse(output, [index], Namer(), mode="vjp") if mode == "rev" else forward(output, [index], Namer())
        fn = matrix_ir(f"{primal.name}_jacobian", output, index, mode, line)
    aux = inline_function(primal, fn.params, namer_knowing(fn), fn.body)[1:]
    fn.results, fn.returns_tuple = list(fn.results) + aux, True
    return fn


def finish_matrix_with_aux(aux_def):
    """The user's ``(matrix, aux)`` from the code's ``matrix, *aux_leaves``."""
    return lambda result: (result[0], aux_def.unflatten(result[1:]))


def with_aux_results(derived, copies, n_wrt):
    """The derivative's results with the aux leaves put before its ``n_wrt`` gradients."""
    results = list(derived.results)
    split = len(results) - n_wrt
    derived.results = results[:split] + list(copies) + results[split:]
    derived.returns_tuple = True
    return derived


def finish_with_aux(kind, aux_def, n_wrt, wrt_is_tuple):
    """The user's result from the code's flat results: ``(grads, aux)`` or ``((value, aux), grads)``."""
    n_aux = aux_def.num_leaves

    def finish(result):
        result = tuple(result)
        grads = result[len(result) - n_wrt:]
        grads = grads if wrt_is_tuple else grads[0]
        start = 0 if kind == "grad" else 1
        aux = aux_def.unflatten(result[start:start + n_aux])
        return (grads, aux) if kind == "grad" else ((result[0], aux), grads)
    return finish
