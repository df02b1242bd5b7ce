"""Scans and permutations along one axis of an n-d array: cumulative sums, the sorting
permutation, and gathering by a permutation (``np.sort(x, axis=k)`` is the gather of ``x`` by
its sorting permutation, so its derivative goes to the selected elements). ``axis`` is a
non-negative int. The flattened 1-d ``cumsum`` lives in reductions.py."""
from ...types import INT64, Type
from ..declare import NON_DIFFERENTIABLE, RULE_ONLY, define
from ..batching_rules import same_call
from ..shape_rules import same_as_argument
from ..type_rules import same_as_first


def _cumsum_axis_vjp(b, g, out, args, params, active):
    return [b.call("cumsum_axis_adjoint", g, axis=params["axis"])]


def _cumsum_axis_adjoint_vjp(b, g, out, args, params, active):
    return [b.call("cumsum_axis", g, axis=params["axis"])]


define("cumsum_axis", same_as_first, "rt.cumsum_axis(_0, {axis})", vjp=_cumsum_axis_vjp, linear_in=(0,),
       shape=same_as_argument(0), batch=same_call("cumsum_axis"))
define("cumsum_axis_adjoint", same_as_first, "rt.cumsum_axis_adjoint(_0, {axis})", kinds={RULE_ONLY},
       vjp=_cumsum_axis_adjoint_vjp, linear_in=(0,), shape=same_as_argument(0),
       batch=same_call("cumsum_axis_adjoint"))

define("argsort_axis", lambda t, p, c=None: Type(INT64, t[0].ndim), "rt.argsort_axis(_0, {axis})",
       kinds={NON_DIFFERENTIABLE})


def _permute_along_vjp(b, g, out, args, params, active):
    # the transpose of a permutation is its inverse, which argsort finds
    perm, axis = args[1], params["axis"]
    return [b.call("permute_along", g, b.call("argsort_axis", perm, axis=axis), axis=axis), None]


define("permute_along", same_as_first, "rt.permute_along(_0, _1, {axis})", vjp=_permute_along_vjp,
       linear_in=(0,))
