"""Calls of compiled and derived functions with Module or pytree arguments: the same transforms of
the flat function (``chains.py``), gradients with respect to a Module regrouped into dicts keyed
like ``named_parameters()`` and with respect to a pytree into its structure, Hessians and
Jacobians assembled in JAX's structure (``matrices.py``); and the flat function a call inspects."""
from ..api.assembled_matrices import AssembledMatrix
from ..api.compiled import CompiledFunction
from ..api.derived import MATRIX_KINDS, DerivedFunction
from ..errors import CallError
from .chains import assembled_matrix_error, flat_chain, regroup
from .flat_functions import FlatFunction, flat_arguments, flat_function, trainable_positions
from .mapped import is_vectorized, plan_vmap
from .matrices import matrix_layout
from .tree_plans import NOT_PLANNED, run_planned
from .tree_slots import mark_static


def run_flattened(fn, args, extra=()):
    """Call the compiled or derived function ``fn`` on arguments that include Modules or pytrees:
    the same transforms of the flat function, gradients with respect to a Module regrouped into
    dicts, with respect to a pytree into its structure. Calls whose only such arguments are
    pytrees take a plan cached per tree structure (``tree_plans.py``)."""
    root = fn
    while isinstance(root, DerivedFunction):
        root = root.base
    if not root.static_positions and (isinstance(fn, (CompiledFunction, DerivedFunction)) or is_vectorized(fn)):
        planned = run_planned(fn, args, extra, plan_call)
        if planned is not NOT_PLANNED:
            return planned
    args = mark_static(root, args)
    return plan_call(fn, args)(flat_arguments(args), extra)


def plan_call(fn, args):
    """``run(flat arguments, extra)``: the call of ``fn`` with ``args`` (Modules, pytrees and
    static arguments among them) as a call of a flat derived function and a regrouping."""
    mapped = plan_vmap(fn, args, flat_plan)
    if mapped is not None:
        return mapped
    target, regroup_results = flat_plan(fn, args)
    return lambda flat_args, extra: regroup_results(target.run(flat_args, extra))


def flat_plan(fn, args):
    """(the flat function a call of ``fn`` with ``args`` runs, the regrouping of its results)."""
    if isinstance(fn, CompiledFunction):
        return flat_function(fn.pyfunc, args, fn.backend), _unchanged
    if not isinstance(fn, DerivedFunction):
        raise CallError(f"{fn.name}: Module and pytree arguments are supported by compile, grad, value_and_grad, "
                        "vjp, jvp, hvp, jacobian, hessian and vmap")
    fn.check_arity(args)
    positions = trainable_positions(args)
    if fn.kind in MATRIX_KINDS:
        layout = matrix_layout(fn, args, positions)
        if layout is not None:  # blocks in JAX's structure, assembled from rows or columns
            return AssembledMatrix(layout), _unchanged
    derived, wrt = flat_chain(fn, args, positions)
    if wrt is None:
        return derived, _unchanged
    return derived, lambda result: regroup_result(fn, positions, wrt, result)


def _unchanged(result):
    return result


def regroup_result(fn, positions, wrt, result):
    """The result of a gradient with respect to Modules or pytrees, in their structures."""
    if fn.has_aux:  # (grads, aux) or ((value, aux), grads)
        value, grads = result if fn.kind == "value_and_grad" else (result[1], result[0])
    else:
        value, grads = (None, result) if fn.kind == "grad" else result
    grads = grads if isinstance(grads, tuple) else (grads,)
    grouped = regroup(positions, wrt, grads)
    grouped = tuple(grouped) if fn.wrt_is_tuple else grouped[0]
    if fn.kind == "grad":
        return (grouped, value) if fn.has_aux else grouped
    return value, grouped


def flat_target(target, args, what):
    """(flat function, flat arguments) that a call of ``target`` with Module arguments runs."""
    root = target
    while isinstance(root, DerivedFunction):
        root = root.base
    if isinstance(root, FlatFunction):  # the pullback of vjp with a Module: already flat
        return target, flat_arguments(args)
    args = mark_static(root, args)
    if isinstance(target, CompiledFunction):
        return flat_function(target.pyfunc, args, target.backend), flat_arguments(args)
    target.check_arity(args)
    positions = trainable_positions(args)
    if target.kind in MATRIX_KINDS and matrix_layout(target, args, positions) is not None:
        raise assembled_matrix_error(target, target.wrt[0])  # no one function to show
    flat, _ = flat_chain(target, args, positions)  # what the call runs
    return flat, flat_arguments(args)
