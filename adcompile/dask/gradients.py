"""``adcompile.dask.value_and_grad``, ``grad`` and ``hvp``: derivatives over sharded data.

The loss is written once, for one block of rows, in ordinary numpy. The parameters (numpy
arrays, numbers or a Module) go to every block; the data arguments (dask arrays chunked along
axis 0, or numpy arrays that are not differentiated, taken as one chunk) are split into aligned
row blocks. The compiled derivative runs on each block where it lives and the blocks' results
are tree-reduced: ``reduce="mean"`` weights each block by its row count (the whole-data loss is a
mean over rows), ``reduce="sum"`` adds them (a sum over rows). Results are numpy values equal
to the single-process derivative of the whole data up to rounding; derivatives with respect to
a Module are dicts keyed like ``named_parameters()``.
"""
import numpy as np

from ..api.compiled import as_compiled, CompiledFunction
from ..api.derived import DerivedFunction
from ..api.directions import tangent_like
from ..errors import CallError
from ..modules.module import Module
from ..module_compiler.calling import module_backend
from ..module_compiler.flat_functions import flat_arguments, flat_function, trainable_positions
from ..module_compiler.chains import flat_wrt, regroup, user_wrt
from .blocks import is_dask_array, stand_in
from .kernel import build_kernel
from .reduction import check_reduce
from .sharded import run_sharded


def _base(f, what):
    compiled = as_compiled(f)
    if not isinstance(compiled, CompiledFunction):
        raise CallError(f"{what}: takes a Python function or an @adcompile.compile function (the loss of one "
                        f"block), not {compiled!r}")
    return compiled


def _backend(f, args):
    """As in ``adcompile.fit``: a plain function of a Module runs on the Module's backend
    (``model.compile("python")``), an ``@adcompile.compile`` function on its own."""
    if isinstance(f, CompiledFunction):
        return f.backend
    model = next(a for a in args if isinstance(a, Module))
    return module_backend(model)


def _flat_layout(args):
    """(flat arguments, start index in them of each user argument)."""
    starts, index = [], 0
    for value in args:
        starts.append(index)
        index += (sum(1 for _ in value.named_parameters()) + sum(1 for _ in value.named_buffers())
                  if isinstance(value, Module) else 1)
    return flat_arguments(args), starts


def _data_positions(args, starts, differentiated):
    """Flat positions of the data arguments: dask arrays, and numpy arrays not differentiated."""
    return [starts[k] for k, value in enumerate(args)
            if is_dask_array(value) or (isinstance(value, np.ndarray) and k not in differentiated)]


class _ValueAndGrad:
    def __init__(self, f, wrt, reduce, with_value, client):
        self.what = "adcompile.dask." + ("value_and_grad" if with_value else "grad")
        check_reduce(reduce, self.what)
        self.compiled = _base(f, self.what)
        self.f = f
        self.user = DerivedFunction(self.compiled, "value_and_grad", wrt)  # checks wrt against the signature
        self.reduce, self.with_value, self.client = reduce, with_value, client
        self.name = f"{self.what}({self.compiled.name})"
        self._kernels = {}

    def __call__(self, *args, client=None):
        if len(args) != len(self.compiled.param_names):
            self.compiled.check_arity(args)
            raise CallError(f"{self.name} takes {len(self.compiled.param_names)} arguments, {len(args)} given")
        has_module = any(isinstance(a, Module) for a in args)
        flat_args, starts = _flat_layout(args)
        example = [stand_in(a) for a in flat_args]
        if has_module:
            positions = trainable_positions(args)
            wrt = user_wrt(self.user, args)
            flat = flat_function(self.compiled.pyfunc, args, _backend(self.f, args))
            derived = flat.derived("value_and_grad", flat_wrt(positions, wrt, self.name))
        else:
            derived = self.user
            wrt = derived.resolved_wrt(derived.signature(example))
        key = (id(derived), derived.signature(example))
        kernel = self._kernels.get(key)
        if kernel is None:
            kernel = self._kernels[key] = build_kernel(derived, example, self.compiled.name)
        data = _data_positions(args, starts, set(wrt))
        if not data:
            raise CallError(f"{self.name}: no data argument (a dask array, or a numpy array that is not "
                            "differentiated) to split into row blocks")
        value, grads = run_sharded(kernel, flat_args, data, self.reduce, self.name,
                                   client=client or self.client)
        if has_module:
            grads = regroup(positions, wrt, grads)
        grads = tuple(grads) if self.user.wrt_is_tuple else grads[0]
        return (value, grads) if self.with_value else grads

    def __repr__(self):
        return f"<{self.name} reduce={self.reduce!r}>"


def value_and_grad(f, wrt=0, reduce="mean", client=None):
    """``(loss, gradient(s))`` of the whole data from ``f`` written for one block of rows.

    Returns a function of the same arguments as ``f``: parameters as numpy arrays, numbers or a
    Module (its gradient is a dict keyed like ``named_parameters()``), data as dask arrays
    chunked along axis 0 (numpy arrays that are not differentiated count as one chunk).
    ``reduce`` is ``"mean"`` if ``f`` is a mean over rows, ``"sum"`` if it is a sum over rows.
    The computation runs on ``client`` (a ``distributed.Client``, also accepted per call as
    ``client=``) or else on Dask's current scheduler (the default Client if one exists).
    """
    return _ValueAndGrad(f, wrt, reduce, True, client)


def grad(f, wrt=0, reduce="mean", client=None):
    """The gradient(s) of the whole data's loss; see :func:`value_and_grad`."""
    return _ValueAndGrad(f, wrt, reduce, False, client)


def hvp(f, primals, tangents, reduce="mean", client=None):
    """Hessian-vector product of the whole data's loss, ``H @ v``, without forming ``H``.

    As ``adcompile.hvp``: ``tangents`` has one entry per primal, None for the data and any argument
    not differentiated (a dict keyed like ``named_parameters()`` for a Module); the data are dask
    arrays chunked along axis 0. Returns one array (or dict) per differentiated argument, a tuple
    if more than one. Each block computes forward-over-reverse on its rows; blocks are reduced as
    in :func:`value_and_grad` (the Hessian of a mean over rows is the row-weighted mean).
    """
    what = "adcompile.dask.hvp"
    check_reduce(reduce, what)
    compiled = _base(f, what)
    primals = tuple(primals) if isinstance(primals, (tuple, list)) else (primals,)
    tangents = tuple(tangents) if isinstance(tangents, (tuple, list)) else (tangents,)
    if len(primals) != len(tangents):
        raise CallError(f"{what}: {len(primals)} primals but {len(tangents)} tangents (use None for the data "
                        "and for arguments that are not differentiated)")
    flat_args, starts = _flat_layout(primals)
    flat_tangents, modules = [], {}
    for k, (value, tangent) in enumerate(zip(primals, tangents)):
        if isinstance(value, Module):
            tangent = tangent or {}
            trainable = [name for name, p in value.named_parameters() if p.requires_grad]
            unknown = set(tangent) - set(trainable)
            if unknown:
                raise CallError(f"{what}: tangent keys {sorted(unknown)} are not parameters with requires_grad "
                                f"of the Module argument {k}")
            flat_tangents += [tangent.get(name) for name, _ in value.named_parameters()]
            flat_tangents += [None] * sum(1 for _ in value.named_buffers())
            modules[k] = [name for name, _ in value.named_parameters() if name in tangent]
        else:
            if tangent is not None and is_dask_array(value):
                raise CallError(f"{what}: argument {k} is sharded data (a dask array); give it the tangent None")
            flat_tangents.append(tangent)
    differentiated = {k for k, t in enumerate(tangents) if t is not None and (not isinstance(t, dict) or t)}
    flat_wrt = tuple(k for k, t in enumerate(flat_tangents) if t is not None)
    if not flat_wrt:
        raise CallError(f"{what}: no tangent given: nothing to differentiate")
    if any(isinstance(a, Module) for a in primals):
        base = flat_function(compiled.pyfunc, primals, _backend(f, primals))
    else:
        base = compiled
    example = [stand_in(a) for a in flat_args]
    names = base.param_names
    extra = tuple(tangent_like(flat_tangents[k], flat_args[k], names[k]) for k in flat_wrt)
    derived = DerivedFunction(DerivedFunction(base, "grad", flat_wrt), "jvp", flat_wrt, tangents_only=True)
    kernel = build_kernel(derived, example, compiled.name)
    data = _data_positions(primals, starts, differentiated)
    _, products = run_sharded(kernel, flat_args, data, reduce, what, extra=extra, has_value=False, client=client)
    products = iter(products)
    out = []
    for k in sorted(differentiated):
        if k in modules:
            out.append({name: next(products) for name in modules[k]})
        else:
            out.append(next(products))
    return out[0] if len(out) == 1 else tuple(out)
