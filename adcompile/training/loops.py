"""Training: ``backward`` (PyTorch's loop), ``train_step`` (one compiled step) and the
compiled programs of ``train_step`` and ``fit`` (``fitting.py``: one compiled call per epoch).

``train_step`` and ``fit`` compile programs (``optim/programs.py``) that call the value and
gradient of ``loss_fn`` with respect to the model's parameters and then the optimizer's update
for each parameter, so forward, backward and update run as one numba function with no Python
between them. ``fit`` also runs the minibatch loop inside the compiled function; the order of
the examples of epoch ``e`` is ``batch_order(n, e, seed, shuffle)``, so a step-by-step loop over
the same batches, or a run resumed with ``initial_epoch``, gives the same parameters.
"""
import inspect

import numpy as np

from ..boundary import api_boundary
from ..api.compiled import CompiledFunction
from ..api.derived import DerivedFunction
from ..errors import CallError
from ..modules.module import Module
from ..module_compiler import TreeStamp, flat_function, module_backend
from ..optim.programs import UpdatePlan, compiled_program
from .clipping import GradClipping
from ..modules.step_counters import advance, step_counters


def _backend(loss_fn, model):
    return loss_fn.backend if isinstance(loss_fn, CompiledFunction) else module_backend(model)


def _python_function(loss_fn):
    if isinstance(loss_fn, CompiledFunction):
        return loss_fn.pyfunc
    if isinstance(loss_fn, DerivedFunction) or not callable(loss_fn) or not hasattr(loss_fn, "__code__"):
        raise CallError("the loss function must be a Python function (or an @adcompile.compile function) "
                        "taking the model first: loss_fn(model, *batch)")
    return loss_fn


def _check_model(model, what):
    if not isinstance(model, Module):
        raise CallError(f"{what}: the model must be an adcompile.Module, not {type(model).__name__}")


# ------------------------------------------------------------------ backward
_value_and_grads = {}


@api_boundary
def backward(loss_fn, model, *args):
    """Run ``loss_fn(model, *args)`` forward and backward once, add the gradients into each
    parameter's ``.grad`` (accumulating until ``zero_grad``, as PyTorch does) and return the
    loss. The gradients are all computed before any ``.grad`` changes.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> model = nn.Linear(2, 1).compile("python")  # "python": the generated Python, not numba
    >>> _ = adcompile.modules.init.ones_(model.weight), adcompile.modules.init.zeros_(model.bias)
    >>> def loss_fn(model, X, y):
    ...     return np.mean((model(X)[:, 0] - y) ** 2)
    >>> X, y = np.array([[1.0, 2.0], [0.0, 1.0]]), np.array([2.0, 1.0])
    >>> float(adcompile.backward(loss_fn, model, X, y))  # predictions 3 and 1
    0.5
    >>> model.weight.grad, model.bias.grad
    (array([[1., 2.]]), array([1.]))
    """
    _check_model(model, "adcompile.backward")
    pyfunc = _python_function(loss_fn)
    key = (pyfunc, _backend(loss_fn, model))
    derived = _value_and_grads.get(key)
    if derived is None:
        derived = _value_and_grads[key] = DerivedFunction(CompiledFunction(pyfunc, backend=key[1]),
                                                          "value_and_grad", 0)
    try:
        loss, grads = derived(model, *args)
    except CallError as error:
        if "returning one float scalar" in str(error):
            raise CallError(f"adcompile.backward: the loss function must return one float scalar (the loss); "
                            f"{error}") from None
        raise
    for name, param in model.named_parameters():
        grad = grads.get(name)
        if grad is None:
            continue
        if param.grad is None:
            param.grad = grad
        else:
            param.grad += grad
    advance(model)
    return loss


# ------------------------------------------------------------------ compiled programs
def _trainable_entries(model, optimizer):
    """(flat index, Parameter, group index) of the parameters that are trained:
    those with requires_grad that the optimizer holds."""
    groups = {id(p): k for k, group in enumerate(optimizer.param_groups) for p in group["params"]}
    entries = []
    for index, (_, param) in enumerate(model.named_parameters()):
        if param.requires_grad and id(param) in groups:
            entries.append((index, param, groups[id(param)]))
    if not entries:
        raise CallError("no parameter of the model is both trainable (requires_grad) and held by the optimizer")
    return entries


class _Program:
    """A compiled training program for one model structure, optimizer configuration and
    clipping: ``train_step`` (one batch) or ``fit_epoch`` (the minibatch loop of an epoch, with
    one row of each group's hyperparameters per batch, so a per-batch scheduler needs no
    recompiling)."""

    def __init__(self, kind, loss_fn, model, optimizer, batch_names, clipping=None):
        self.kind = kind
        self.stamp = TreeStamp(model)
        self.config = _optimizer_config(optimizer)
        self.clipping = clipping if clipping is not None else GradClipping()
        backend = _backend(loss_fn, model)
        pyfunc = _python_function(loss_fn)
        self.model, self.optimizer = model, optimizer
        entries = _trainable_entries(model, optimizer)
        flat = flat_function(pyfunc, [model] + [None] * len(batch_names), backend)
        leaves = flat.param_names[:len(flat.param_names) - len(batch_names)]
        loss_and_grads = flat.derived("value_and_grad", tuple(index for index, *_ in entries))
        # the parameters' variables are the flat function's leaves (``model_fc1_weight``)
        self.plan = UpdatePlan(optimizer, [(param, k) for _, param, k in entries],
                               [leaves[index] for index, *_ in entries])
        self.leaf_of = dict(zip([name for name, _ in model.named_parameters()]
                                + [name for name, _ in model.named_buffers()], leaves))
        namespace = self.plan.namespace()
        namespace["loss_and_grads"] = loss_and_grads
        state = self.plan.state_arguments()
        if kind == "train_step":
            lines = [f"def train_step({', '.join(leaves + batch_names + state + self.plan.group_arguments())}):"]
            lines += self._step_lines(model, f"loss_and_grads({', '.join(leaves + batch_names)})", "    ")
            lines.append("    return loss")
        else:
            batch_args = [f"{name}_batch" for name in batch_names]
            tables = [f"{group}_per_batch" for group in self.plan.group_arguments()]
            lines = [f"def fit_epoch({', '.join(leaves + batch_names + ['order', 'batch_size'] + state + tables)}):",
                     "    n = order.shape[0]",
                     "    total = 0.0",
                     "    batches = 0",
                     "    for start in range(0, n, batch_size):",
                     "        batch = order[start:start + batch_size]"]
            lines += [f"        {arg} = {name}[batch]" for arg, name in zip(batch_args, batch_names)]
            lines += [f"        {group} = {group}_per_batch[batches]" for group in self.plan.group_arguments()]
            lines += self._step_lines(model, f"loss_and_grads({', '.join(leaves + batch_args)})", "        ")
            lines += ["        total += loss", "        batches += 1", "    return total / batches"]
        self.program = compiled_program(kind, lines, namespace, backend)
        self.params = [p for _, p in model.named_parameters()]
        self.buffers = [b for _, b in model.named_buffers()]

    def _step_lines(self, model, call, indent):
        """Loss and gradients, clipping, the updates, and the Dropout streams' step counters."""
        grads = [f"{name}_grad" for name in self.plan.names]
        lines = [f"{indent}loss, grads = {call}", f"{indent}{', '.join(grads)}, = grads"]
        lines += self.clipping.lines(grads, indent)
        lines += self.plan.update_lines(grads, indent=indent)
        lines += [f"{indent}{self.leaf_of[name]}[0] += 1" for name, _ in step_counters(model)]
        return lines

    def current(self, optimizer):
        return self.stamp.current(self.model) and self.config == _optimizer_config(optimizer)

    def restamp(self):
        """Take the model as it is now as the one compiled for (after something changed and
        changed back, such as the train/eval modes around a validation pass)."""
        self.stamp = TreeStamp(self.model)

    def arguments(self, batch, extra=(), hypers=None):
        """The program's arguments; ``hypers``: the groups' hyperparameters (default: the
        optimizer's current ones)."""
        return ([p._data for p in self.params] + self.buffers + list(batch) + list(extra)
                + self.plan.state_values() + (self.optimizer.group_hypers() if hypers is None else list(hypers)))


def _optimizer_config(optimizer):
    """What the update code depends on at compile time: the group memberships and flags."""
    return tuple((tuple(id(p) for p in group["params"]), optimizer.flags(group)) for group in optimizer.param_groups)


def _batch_names(loss_fn, count, what):
    names = list(inspect.signature(_python_function(loss_fn)).parameters)[1:]
    if len(names) != count:
        raise CallError(f"{what}: the loss function takes the model and {len(names)} more argument(s) "
                        f"({', '.join(names)}), {count} given")
    return names


class TrainStep:
    """``step(*batch) -> loss``: forward, backward and the optimizer update in one compiled call."""

    def __init__(self, loss_fn, model, optimizer, clipping=None):
        _check_model(model, "adcompile.train_step")
        self.loss_fn, self.model, self.optimizer = loss_fn, model, optimizer
        self.clipping = clipping
        self._program = None

    @api_boundary
    def __call__(self, *batch):
        program = self._program
        if program is None or not program.current(self.optimizer):
            names = _batch_names(self.loss_fn, len(batch), "train_step")
            program = self._program = _Program("train_step", self.loss_fn, self.model, self.optimizer, names,
                                               self.clipping)
        return program.program(*program.arguments(batch))

    @property
    def program(self):
        """The compiled program (after a first call): ``adcompile.source(step.program)``."""
        return None if self._program is None else self._program.program


def train_step(loss_fn, model, optimizer, clip_grad_norm=None, clip_grad_value=None, clip_norm_type=2.0):
    """A function ``step(*batch) -> loss`` that runs ``loss_fn(model, *batch)``, its gradient
    and ``optimizer``'s update of the parameters, as one compiled call. (It does not fill
    ``.grad``: the gradients live only inside the compiled step.) ``clip_grad_norm`` /
    ``clip_grad_value`` clip the gradients before the update, as ``nn.utils.clip_grad_norm_``
    (of order ``clip_norm_type``) / ``nn.utils.clip_grad_value_`` do.

    >>> import numpy as np, adcompile
    >>> from adcompile import nn
    >>> model = nn.Linear(1, 1, bias=False).compile("python")  # the generated Python, not numba
    >>> _ = adcompile.modules.init.zeros_(model.weight)
    >>> def loss_fn(model, X, y):
    ...     return np.mean((model(X)[:, 0] - y) ** 2)
    >>> step = adcompile.train_step(loss_fn, model, adcompile.optim.SGD(model.parameters(), lr=0.1))
    >>> X, y = np.array([[1.0], [2.0]]), np.array([3.0, 6.0])  # y = 3 x
    >>> losses = [float(step(X, y)) for _ in range(30)]  # each step: forward, backward, update
    >>> losses[0], losses[-1] < 1e-12
    (22.5, True)
    >>> np.round(model.weight.data, 6)
    array([[3.]])
    """
    return TrainStep(loss_fn, model, optimizer, GradClipping(clip_grad_norm, clip_grad_value, clip_norm_type))


# ------------------------------------------------------------------ fit
def batch_order(n, epoch, seed=0, shuffle=True):
    """The order in which ``fit`` visits the ``n`` examples in epoch ``epoch`` (0-based).

    >>> import adcompile
    >>> adcompile.batch_order(5, epoch=0, shuffle=False)
    array([0, 1, 2, 3, 4])
    >>> sorted(adcompile.batch_order(5, epoch=1)) == [0, 1, 2, 3, 4]  # a permutation per epoch
    True
    """
    if not shuffle:
        return np.arange(n)
    return np.random.default_rng([seed, epoch]).permutation(n)
