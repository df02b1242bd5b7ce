"""Reverse mode of a checkpointed loop: the binomial (revolve) schedule as generated code.

The forward sweep runs the loop untaped and keeps only its state on entry (``keep_entry_state``).
The backward sweep (``reverse_checkpointed_loop``) reverses the ``n`` iterations with at most
``s`` snapshots of the state (Griewank and Walther's binomial schedule, which recomputes the
fewest iterations: each about ``r`` times, ``r`` the least with ``C(s + r, s) >= n``):

    # checkpointed loop: binomial (revolve) schedule, snapshots of x
    n_steps = rt.range_len(0, n, 1)
    snapshots = rt.checkpoint_snapshots(n_steps, 50, x_bytes)
    snap_x = np.empty((snapshots,) + x.shape); snap_step = np.empty(snapshots, np.int64)
    snap_x[0] = x_entry; snap_step[0] = 0; top = 0     # the snapshot store
    hi = n_steps
    while hi > 0:                                      # reverse iteration hi - 1
        lo = snap_step[top]; x_ck = snap_x[top].copy() # restore the newest snapshot
        while hi - lo > 1:                             # the recompute loop (untaped)
            if top + 1 < snapshots:                    #   up to the next snapshot
                mid = lo + rt.revolve_advance(hi - lo, snapshots - top)
                for t in range(lo, mid): <body>
                top += 1; snap_x[top] = x_ck; snap_step[top] = mid; lo = mid
            else:                                      #   no free slot: up to hi - 1
                for t in range(lo, hi - 1): <body>
                lo = hi - 1
        <iteration lo taped, then reversed: bx = ... > # the reverse loop's step
        hi = lo
        if top > 0 and snap_step[top] == hi: top -= 1  # that snapshot is used up

Every variable of the schedule is new: the primal variables keep the values the forward
sweep left, as around any region (``taping.py``). The segments are inlined IR functions
(``checkpoint_segments.py``), so the generated code is ordinary IR that forward mode
differentiates again (a Hessian-vector product of a checkpointed loop).
"""
from ...ir.builder import Builder, const
from ...ir.indexing import index_params
from ...ir.nodes import Assign, Comment, If, SetItem, Var, While
from ...ir.clone import inline_function
from ...ir.types import Type
from .checkpoint_segments import CheckpointedLoop

_ITEM_BYTES = {"f8": 8, "f4": 4, "i8": 8, "b1": 1, "c16": 16, "c8": 8}


def keep_entry_state(transform, out, stmt, depth):
    """In the forward sweep, before the loop: save a copy of each state variable (the first
    snapshot), as any saved value is (a variable, or a tape inside other loops)."""
    region = CheckpointedLoop(transform, stmt)
    if not region.has_reverse:
        return
    for var in region.state:
        kept = Var(transform.namer.fresh(var.name + "_entry"), var.type, is_temp=depth > 0)
        out.append(Assign(kept, "copy" if var.type.ndim else "alias", [var], loc=stmt.loc))
        transform.save(out, stmt, kept, depth, var.name + "_entry", key=(id(stmt), var, "checkpoint"), direct=True)


def reverse_checkpointed_loop(transform, stmt, b):
    """Emit into ``b`` the backward of a checkpointed loop (see the module docstring)."""
    region = CheckpointedLoop(transform, stmt)
    if not region.has_reverse:
        return
    region.check_no_local_read_after(transform)
    ctx, namer = transform.context, transform.namer
    loop = region.loop
    cotangents = [b.emit("alias", [ctx.take_cotangent(v, b)], target=Var(namer.fresh("ct_" + v.name), v.type))
                  for v in region.active_state]
    entry = [_entry_value(transform, stmt, var, b) for var in reversed(region.state)][::-1]
    b.append(Comment("checkpointed loop: binomial (revolve) schedule, snapshots of "
                     + ", ".join(v.name for v in region.state)))
    n = b.emit("range_len", [loop.start, loop.stop, loop.step], target=_int(namer, "n_steps"))
    requested = region.snapshots if region.snapshots is not None else const(-1)
    count = b.emit("checkpoint_snapshots", [n, requested, _state_bytes(b, entry)], target=_int(namer, "snapshots"))
    snaps = [_snapshot_array(b, namer, var, value, count) for var, value in zip(region.state, entry)]
    steps = b.emit("empty", [count], target=Var(namer.fresh("snap_step"), Type("i8", 1)), ndim=1, dtype="i8")
    top = _int(namer, "top")
    b.emit("alias", [const(0)], target=top)
    _store(b, snaps, steps, top, entry, const(0))
    sums = [b.emit("zeros_like", [v], target=Var(namer.fresh("b" + v.name + "_total"), v.type))
            for v in region.active_others]
    hi, lo = _int(namer, "hi"), _int(namer, "lo")
    b.emit("alias", [n], target=hi)
    body = []
    bb = Builder(namer, body, b.loc)
    bb.append(Comment("restore the newest snapshot"))
    bb.emit("getitem", [steps, top], target=lo, **index_params(steps.type, [("int", top)])[0])
    current = [Var(namer.fresh(v.name + "_ck"), v.type) for v in region.state]
    for var, snap in zip(current, snaps):
        row = bb.emit("getitem", [snap, top], **index_params(snap.type, [("int", top)])[0])
        bb.emit("copy" if var.type.ndim else "alias", [row], target=var)
    body.append(_recompute_loop(region, transform, namer, b.loc, current, snaps, steps, top, lo, hi, count))
    bb.append(Comment("the reverse loop's step: iteration lo, taped, then reversed"))
    vjp = region.segment_vjp(type(transform), transform.fn.source_file)
    results = inline_function(vjp, current + region.others + [lo, hi] + cotangents, namer, body, b.loc)
    grads = results[len(region.active_state):]
    for ct, grad in zip(cotangents, grads):
        bb.emit("alias", [grad], target=ct)
    for acc, grad in zip(sums, grads[len(cotangents):]):
        bb.emit("add", [acc, grad], target=acc)
    bb.emit("alias", [lo], target=hi)
    used_up = bb.call("and", bb.call("gt", top, const(0)),
                      bb.call("eq", bb.emit("getitem", [steps, top], **index_params(steps.type, [("int", top)])[0]), hi))
    body.append(If(used_up, [Assign(top, "sub", [top, const(1)], loc=b.loc)], [], b.loc))
    cond_body = []
    more = Builder(namer, cond_body, b.loc).call("gt", hi, const(0))
    b.append(While(cond_body, more, body, b.loc))
    for var, ct in zip(region.active_state, cotangents):
        ctx.accumulate(b, var, ct)
    for var, acc in zip(region.active_others, sums):
        ctx.accumulate(b, var, acc)


def _recompute_loop(region, transform, namer, loc, current, snaps, steps, top, lo, hi, count):
    """``while hi - lo > 1:`` advance the state untaped, storing a snapshot where the binomial
    schedule places one while a slot is free, else up to iteration ``hi - 1``."""
    segment = region.segment("checkpointed_advance", region.state, transform.fn.source_file)
    cond_body = []
    cb = Builder(namer, cond_body, loc)
    far = cb.call("gt", cb.call("sub", hi, lo), const(1))
    store, last = [], []
    sb = Builder(namer, store, loc)
    sb.append(Comment("the recompute loop: advance to the next snapshot of the binomial schedule"))
    advance = sb.call("revolve_advance", sb.call("sub", hi, lo), sb.call("sub", count, top))
    mid = sb.emit("add", [lo, advance], target=_int(namer, "mid"))
    _advance(segment, current, region.others, lo, mid, namer, store, loc)
    sb.emit("alias", [mid], target=lo)
    sb.emit("add", [top, const(1)], target=top)
    _store(sb, snaps, steps, top, current, lo)
    lb = Builder(namer, last, loc)
    lb.append(Comment("no free snapshot: advance to iteration hi - 1"))
    before_hi = lb.emit("sub", [hi, const(1)], target=_int(namer, "last"))
    _advance(segment, current, region.others, lo, before_hi, namer, last, loc)
    lb.emit("alias", [before_hi], target=lo)
    body = []
    fb = Builder(namer, body, loc)
    free = fb.call("lt", fb.call("add", top, const(1)), count)
    body.append(If(free, store, last, loc))
    return While(cond_body, far, body, loc)


def _advance(segment, current, others, lo, hi, namer, block, loc):
    results = inline_function(segment, current + others + [lo, hi], namer, block, loc)
    for var, value in zip(current, results):
        block.append(Assign(var, "alias", [value], loc=loc))


def _entry_value(transform, stmt, var, b):
    """The state variable's value on entry to the loop, as the forward sweep kept it."""
    saved = transform.saves.get((id(stmt), var, "checkpoint")) if transform.needed is not None else None
    value = Var(transform.namer.fresh(var.name + "_entry"), var.type)
    if saved is None:  # the first round, before the forward sweep has run: only a type
        b.emit("placeholder", [], target=value, type=var.type)
    else:
        transform.pop_saved(saved, b, value)
    return value


def _int(namer, base):
    return Var(namer.fresh(base), Type("i8"))


def _state_bytes(b, values):
    total = const(0)
    for value in values:
        size = const(_ITEM_BYTES.get(value.type.dtype, 8))
        for axis in range(value.type.ndim):
            size = b.mul(size, b.emit("dim", [value], axis=axis))
        total = b.add(total, size)
    return total


def _snapshot_array(b, namer, var, value, count):
    dims = [b.emit("dim", [value], axis=axis) for axis in range(var.type.ndim)]
    snap = Var(namer.fresh("snap_" + var.name), Type(var.type.dtype, var.type.ndim + 1))
    return b.emit("empty", [count] + dims, target=snap, ndim=var.type.ndim + 1, dtype=var.type.dtype)


def _store(b, snaps, steps, top, values, step):
    b.append(Comment("the snapshot store"))
    for snap, value in zip(snaps, values):
        b.append(SetItem(snap, value, [("int", top)]))
    b.append(SetItem(steps, step, [("int", top)]))
