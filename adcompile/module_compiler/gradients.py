"""Derived functions called with Module arguments: the same transforms of the flat function, and
gradients with respect to a Module regrouped into dicts keyed like ``named_parameters()``
(``grad``, ``value_and_grad``, ``vjp``), and the flat function a call inspects."""
from collections import OrderedDict


from ..api.compiled import CompiledFunction
from ..api.derived import MATRIX_KINDS, DerivedFunction
from ..errors import CallError
from ..ir.types import type_of_value
from ..modules.module import Module, needs_flat_function
from .flat_functions import FlatFunction, TreeEntry, flat_arguments, flat_function, trainable_positions
from .mapped import is_vectorized, plan_vmap
from .matrices import matrix_of_tree
from .tree_plans import NOT_PLANNED, run_planned
from .tree_slots import TreeSlot, mark_static, needs_slot


def regroup(positions, wrt, grads):
    """The gradients in the user's terms: a dict for a Module argument, the argument's structure
    for a pytree, an array otherwise."""
    grads = iter(grads)
    out = []
    for k in wrt:
        entry = positions[k]
        if isinstance(entry, TreeEntry):
            out.append(entry.rebuild([next(grads) for _ in entry]))
        elif isinstance(entry, list):
            out.append(OrderedDict((name, next(grads)) for _, name in entry))
        else:
            out.append(next(grads))
    return out


def flat_wrt(positions, wrt, fname):
    indices = []
    for k in wrt:
        entry = positions[k]
        if entry is None:
            raise static_wrt_error(fname, k)
        if isinstance(entry, TreeEntry):
            indices += [index for index, _ in entry]
        elif isinstance(entry, list):
            if not entry:
                raise CallError(f"{fname}: the Module argument {k} has no parameter with requires_grad=True")
            indices += [index for index, _ in entry]
        else:
            indices.append(entry)
    return tuple(indices)


def user_wrt(fn, args):
    if fn.wrt is not None:
        return list(fn.wrt)
    return [k for k, a in enumerate(args)
            if isinstance(a, (Module, TreeSlot)) or needs_slot(a) or (type_of_value(a) is not None and type_of_value(a).is_float)]


def static_wrt_error(fname, k):
    return CallError(f"{fname}: argument {k} is static (compile(f, static_argnums=...)): a compile-time "
                     "constant has no derivative; differentiate with respect to another argument")


def composition_error(level, k):
    return CallError(
        f"{level.name}: a {level.kind} with respect to the Module (or tuple, list, dict) argument {k} inside "
        "another derivative is not supported (its result is a dict of arrays, not one array); for second "
        f"derivatives with respect to a model's parameters use adcompile.hessian(f, wrt={k}) (a dict of dicts) "
        "or adcompile.hvp(f, primals, tangents) with a tangent dict, and for derivatives of a non-scalar output "
        f"adcompile.jacobian(f, wrt={k}) or adcompile.vjp")


def flat_chain(fn, args, positions):
    """The transforms of ``fn`` (a derived function of a compiled function) applied to the flat
    function of ``args``: (flat derived function, the user's wrt if its outermost transform is
    a gradient with respect to a Module, whose result must be regrouped into dicts, else None)."""
    levels = []
    while isinstance(fn, DerivedFunction):
        levels.append(fn)
        fn = fn.base
    if not isinstance(fn, CompiledFunction):
        raise CallError(f"{levels[-1].name if levels else fn!r}: Module arguments are supported by "
                        "functions built from a plain or compiled Python function")
    flat = flat_function(fn.pyfunc, args, fn.backend)
    spec, grouped = [], None
    for depth, level in enumerate(reversed(levels)):
        wrt = user_wrt(level, args)
        modules = [k for k in wrt if isinstance(positions[k], list)]
        if modules:
            if depth != len(levels) - 1 or level.kind not in ("grad", "value_and_grad"):
                raise composition_error(level, modules[0])
            spec.append((level.kind, flat_wrt(positions, wrt, level.name), level.tangents_only, level.has_aux))
            grouped = wrt
        else:
            if any(positions[k] is None for k in wrt):
                raise static_wrt_error(level.name, next(k for k in wrt if positions[k] is None))
            indices = tuple(positions[k] for k in wrt)
            spec.append((level.kind, indices if level.wrt_is_tuple else indices[0], level.tangents_only,
                         level.has_aux))
    return flat.chain(tuple(spec)), grouped


def run_flattened(fn, args, extra=()):
    """Call the compiled or derived function ``fn`` on arguments that include Modules or pytrees:
    the same transforms of the flat function, gradients with respect to a Module regrouped into
    dicts, with respect to a pytree into its structure. Calls whose only such arguments are
    pytrees take a plan cached per tree structure (``tree_plans.py``)."""
    root = fn
    while isinstance(root, DerivedFunction):
        root = root.base
    if getattr(fn, "kind", None) in MATRIX_KINDS and needs_flat_function(args[fn.wrt[0]:fn.wrt[0] + 1]):
        return matrix_of_tree(fn, args)  # dicts (of dicts) assembled column by column
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
    # hessian(f, wrt=k) and jacobian(f, wrt=k) of a Module: dicts assembled from many functions
    if ((target.kind in ("hessian", "jacobian", "vjp") or target.tangents_only)
            and any(isinstance(args[k], Module) for k in target.wrt)):
        k = next(k for k in target.wrt if isinstance(args[k], Module))
        raise CallError(f"adcompile.{what}: the Hessian or Jacobian with respect to the Module argument "
                        f"{target.param_names[k]!r} is assembled from one generated function per parameter; "
                        f"inspect the gradient instead: adcompile.{what}(adcompile.grad(f, wrt={k}), "
                        f"{', '.join(target.param_names)})")
    flat, _ = flat_chain(target, args, trainable_positions(args))  # what the call runs
    return flat, flat_arguments(args)
