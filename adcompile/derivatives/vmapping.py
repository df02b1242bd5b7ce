"""``vmap``: a compiled or derived function applied to every member of a batch at once.

``vmap(f)(xs)`` is ``np.stack([f(x) for x in xs])`` computed in one pass: the IR of ``f`` for
one member is batched (``transforms/batching.py``), so that ``W @ x`` of every member becomes
one matrix-matrix product. The batch is the leading axis of each batched argument (what
users expect); inside, the batching transform keeps it last, where numpy's broadcasting and
indexing leave it alone, and the generated function moves it at the boundary:

    def f_vmap(xs, W):
        x = np.transpose(xs, (1, 0))       # (n, batch)
        <f's body, batched>
        return np.transpose(out, (1, 0))   # (batch, m)
"""
import numpy as np

from ..api import specialised
from ..api.compiled import as_compiled
from ..api.specialised import Specialised, takes_flat_call
from ..tree import is_container
from ..errors import CallError, located
from ..ir.builder import Builder, Namer
from ..ir.clone import copy_function, inline_function
from ..ir.nodes import Function, Var
from ..passes.observed_passes import optimize_observed
from ..transforms.batching import Unbatchable, batch


class Vectorized(Specialised):
    """``vmap(base, in_axes)``: ``base`` mapped over the leading axis of some arguments."""

    def __init__(self, base, in_axes):
        super().__init__()
        self.base = as_compiled(base)
        self.backend = self.base.backend
        self.param_names = self.base.param_names
        self.name = f"vmap({self.base.name})"
        self.in_axes = in_axes
        self.batched = _batched_positions(in_axes, len(self.param_names), self.name)
        self.__doc__ = (f"{self.base.name} applied to each member of a batch: the leading axis of "
                        f"{', '.join(self.param_names[k] for k in self.batched)}.")

    @property
    def static_positions(self):
        return self.base.static_positions

    def origin(self):
        return f"vmap of {self.base.origin()}"

    def check_arity(self, args):
        self.base.check_arity(args)

    def python_function(self):
        return self.base.python_function()

    def member_signature(self, sig):
        """The signature of one member: the batched arguments without their leading axis."""
        member = list(sig)
        for k in self.batched:
            if not sig[k].ndim:
                raise CallError(f"{self.name}: argument '{self.param_names[k]}' is {sig[k].describe()}, but "
                                "in_axes maps it over its leading axis: pass an array, or None in in_axes")
            member[k] = sig[k].with_ndim(sig[k].ndim - 1)
        return tuple(member)

    def primal_ir(self, sig):
        return self.base.primal_ir(self.member_signature(sig))

    def user_returns_tuple(self, sig):
        return self.base.user_returns_tuple(self.member_signature(sig))

    def finisher(self, sig, fn_ir):
        return self.base.finisher(self.member_signature(sig), fn_ir)

    def ir(self, sig):
        member = self.base.ir(self.member_signature(sig))
        try:
            batched = batch(member, self.batched, Namer())
        except Unbatchable as error:
            raise located(CallError, f"{self.name}: {self.base.name} cannot be batched: {error}; call it "
                          "once per member instead", error.loc) from None
        namer = Namer()
        params = [Var(namer.fresh(p.name), p.type) for p in batched.params]
        body = []
        b = Builder(namer, body)
        args = [_moved(b, p, to_last=True) if k in self.batched else p for k, p in enumerate(params)]
        results = [_moved(b, r, to_last=False) for r in inline_function(batched, args, namer, body)]
        derived = Function(f"{member.name}_vmap", params, body, results, member.returns_tuple, member.source_file)
        return optimize_observed(copy_function(derived), self.name) if specialised.OPTIMIZE else derived

    def mapped_over(self, base, in_axes):
        """The same map of another function (the flat function of a call with pytrees)."""
        return type(self)(base, in_axes)

    def invoke(self, args, kwargs):
        if kwargs or len(args) != len(self.param_names):
            args = self.call_arguments(args, kwargs)
        if takes_flat_call(args):  # pytree arguments: the vmap of the flat function (module_compiler/mapped.py)
            return self.run(args)
        sizes = {np.shape(args[k])[0] for k in self.batched if np.ndim(args[k])}
        if len(sizes) > 1:
            raise CallError(f"{self.name}: the batched arguments have different leading lengths {sorted(sizes)}")
        return self.run(args)

    def __repr__(self):
        return f"<adcompile {self.name}>"


def _moved(b, x, to_last):
    """``x`` with its leading axis moved last (``to_last``) or its last axis moved first."""
    ndim = x.type.ndim
    if ndim < 2:
        return x
    axes = tuple(range(1, ndim)) + (0,) if to_last else (ndim - 1,) + tuple(range(ndim - 1))
    return b.call("transpose", x, axes=axes)


def _batched_positions(in_axes, count, name):
    """The positions of the arguments mapped over (an entry of ``in_axes`` that is a pytree
    prefix of its argument, such as {"W": 0, "b": None}, counts as mapped: its leaves are
    sorted out at the call)."""
    if isinstance(in_axes, int) and not isinstance(in_axes, bool) and in_axes == 0:
        return list(range(count))
    if not isinstance(in_axes, (tuple, list)) or len(in_axes) != count or \
            any(not _is_axis(a) and not is_container(a) for a in in_axes):
        raise CallError(f"{name}: in_axes must be 0 or a tuple with 0 or None for each of its {count} "
                        f"arguments (for a tuple, list or dict argument, 0, None or a tree of them "
                        f"like the argument), not {in_axes!r}")
    if all(a is None for a in in_axes):
        raise CallError(f"{name}: in_axes maps no argument")
    return [k for k, a in enumerate(in_axes) if a is not None]


def _is_axis(a):
    return a is None or (isinstance(a, int) and not isinstance(a, bool) and a == 0)


def vmap(f, in_axes=0):
    """``f`` applied to every member of a batch in one pass: the batched arguments (every
    argument for ``in_axes=0``, else those with 0 in the tuple ``in_axes``; None leaves an
    argument as it is for all members) have the members along their leading axis, and so
    has every result. For a tuple, list or dict argument the entry of ``in_axes`` may be a
    tree prefix of it, as in JAX (``({"W": None, "b": 0}, 0)``). ``f`` is a Python function or a compiled or derived function
    (``vmap(grad(f))`` gives one gradient per member); the result is a function like
    ``grad(f)``, which can be inspected and differentiated.

    >>> import numpy as np, adcompile
    >>> @adcompile.compile(backend="python")
    ... def f(x, W):
    ...     return np.tanh(W @ x)
    >>> W = np.array([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    >>> xs = np.array([[0.1, 0.2], [0.3, 0.0]])          # two members
    >>> adcompile.vmap(f, in_axes=(0, None))(xs, W).shape  # f of each member: 3 values
    (2, 3)
    """
    return Vectorized(f, in_axes)


__all__ = ["vmap"]
