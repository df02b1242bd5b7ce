"""The vjp IR cut in two, so that ``vjp`` runs the forward sweep once and each pullback call
runs only the backward sweep with the values the forward saved.

The cut is before the first top-level statement that reads a cotangent (or the reverse
transform's ``# backward`` line, if earlier): everything before it (the forward sweep, the tapes it fills) becomes the forward function, which returns the
outputs and the *residuals* -- the values it computed that the rest reads. The rest becomes
the backward function, taking the primal arguments, the residuals and the cotangents:

    def f_vjp(x, bout):                  def f_vjp_forward(x):        def f_vjp_backward(x, y, bout):
        y = np.sin(x)                        y = np.sin(x)                bx = bout * np.cos(x)
        bx = bout * np.cos(x)                return y, y                  return bx
        return y, bx

A residual that is a parameter the forward rebinds (a written argument's copy) is passed in
its own slot; the backward's parameter slot for the argument itself is then unused.
"""
from dataclasses import dataclass

from ..ir.builder import Builder, Namer
from ..ir.memory import memory_roots, sharing
from ..ir.nodes import AccumItem, Assign, Comment, For, Function, Pop, SetItem, Var, vars_read, walk


@dataclass
class SplitPullback:
    forward: Function   # primal parameters -> outputs, then residuals
    backward: Function  # primal parameters, residuals, cotangents -> gradients
    n_outputs: int
    consumes_residuals: bool  # the backward mutates saved values: they serve one call only


def split_pullback(vjp_ir, n_cotangents):
    """``vjp_ir`` (``transforms.reverse`` with mode "vjp": results are the outputs then the
    gradients) cut into a SplitPullback, or None when no cut keeps the outputs in the forward
    part."""
    n_primal = len(vjp_ir.params) - n_cotangents
    primal_params, cotangents = vjp_ir.params[:n_primal], set(vjp_ir.params[n_primal:])
    n_outputs = n_cotangents  # one cotangent per output
    cut = next((k for k, stmt in enumerate(vjp_ir.body)
                if _reads_any([stmt], cotangents) or _starts_backward(stmt)), len(vjp_ir.body))
    first, rest = vjp_ir.body[:cut], vjp_ir.body[cut:]
    outputs, gradients = vjp_ir.results[:n_outputs], vjp_ir.results[n_outputs:]
    written_first, written_rest = _written(first), _written(rest)
    if any(isinstance(out, Var) and out in written_rest for out in outputs):
        return None
    needed = _exposed_reads(rest, set(), set()) | {g for g in gradients if isinstance(g, Var)}
    residuals = sorted((v for v in needed if v in written_first and v not in cotangents), key=lambda v: (v.name, v.uid))
    forward_body = _defined_first([v for v in residuals if v not in primal_params], first) + list(first)
    forward = Function(f"{vjp_ir.name}_forward", list(primal_params), forward_body,
                       list(outputs) + residuals, True, vjp_ir.source_file)
    unused = {p: Var(f"_{p.name}_unused", p.type) for p in primal_params if p in set(residuals)}
    backward_params = [unused.get(p, p) for p in primal_params] + residuals + list(vjp_ir.params[n_primal:])
    backward = Function(f"{vjp_ir.name}_backward", backward_params, list(rest), list(gradients), True,
                        vjp_ir.source_file)
    roots = memory_roots(vjp_ir.body, vjp_ir.params)
    return SplitPullback(forward, backward, n_outputs, _mutates(rest, sharing(residuals, roots), roots))


def _starts_backward(stmt):
    """The reverse transform's ``# backward`` line: the adjoints are set up after it."""
    return isinstance(stmt, Comment) and stmt.text == "backward"


def _exposed_reads(block, defined, out):
    """The Vars that ``block`` may read before assigning them (a loop's index is assigned in
    its body; an assignment inside a branch or loop does not count after it)."""
    defined = set(defined)
    for stmt in block:
        out.update(a for a in stmt.reads() if isinstance(a, Var) and a not in defined)
        for inner in stmt.blocks():
            _exposed_reads(inner, defined | ({stmt.index} if isinstance(stmt, For) else set()), out)
        defined.update(_binds(stmt))
    return out


def _binds(stmt):
    """The Vars that ``stmt`` surely gives a value when it runs (not a loop's index: the loop
    may run no iteration)."""
    if isinstance(stmt, Assign) and not stmt.inplace:
        return [stmt.target]
    if isinstance(stmt, Pop):
        return [stmt.target]
    return []


def _reads_any(block, atoms):
    return any(v in atoms for v in vars_read(block))


def _written(block):
    return {v for stmt in walk(block) for v in stmt.writes()}


def _defined_first(residuals, block):
    """Placeholders for residuals that ``block`` assigns only inside branches or loops, so the
    forward function can return them on every path."""
    top_level = {v for stmt in block for v in _binds(stmt)}
    nested = [v for v in residuals if v not in top_level]
    out = []
    b = Builder(Namer(), out)
    for var in nested:
        b.emit("placeholder", [], target=var, type=var.type)
    return out


def _mutates(block, residual_memory, roots):
    """Whether ``block`` changes a residual's contents (a write into it or into a view of it,
    a pop from a tape, an in-place update): then the residuals serve one backward run."""
    def touches(var):
        return var in residual_memory or bool(roots.get(var, set()) & residual_memory)
    for stmt in walk(block):
        if isinstance(stmt, (SetItem, AccumItem)) and touches(stmt.array):
            return True
        if isinstance(stmt, Pop) and stmt.tape in residual_memory:
            return True
        if isinstance(stmt, Assign) and stmt.inplace and touches(stmt.target):
            return True
    return False


__all__ = ["SplitPullback", "split_pullback"]
