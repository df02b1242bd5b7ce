"""What reverse mode offers the reverse rule of a region: the public interface for ``CustomCall``s.

A ``CustomCall`` statement (a custom Function's call, a derivative called inside compiled
code) brings its own reverse rule instead of the reverse of its inlined body: its ``info``
has a method ``reverse_rule(ctx, stmt, b)``. The reverse transform calls it at the point of
the backward sweep where the call is undone, with ``b`` the ``ir.builder.Builder`` to emit
the rule's statements into and ``ctx`` a ``ReverseContext``. The rule reads the cotangents of
``stmt.outputs`` and accumulates cotangents into ``stmt.inputs``, through ``ctx`` only; the
values the region overwrote are put back around it by the transform.

    def reverse_rule(self, ctx, stmt, b):
        (y,), (x,) = stmt.outputs, stmt.inputs
        if ctx.is_active(x) and ctx.is_active(y):
            ct = ctx.take_pending(y) or ctx.adjoint(y)   # (reset it if ctx.is_overwritten(y))
            ctx.accumulate(b, x, b.mul(ct, const(2.0)))
"""


class ReverseContext:
    """The reverse transform, seen from a region's reverse rule."""

    def __init__(self, transform):
        self._transform = transform

    @property
    def namer(self):
        """The ``Namer`` of the derivative function: fresh names for the rule's variables."""
        return self._transform.namer

    def is_active(self, var):
        """Whether ``var`` depends on the differentiated inputs and influences the results."""
        return var in self._transform.active

    def is_overwritten(self, var):
        """Whether ``var`` is assigned more than once: its adjoint must restart from zero when
        the sweep passes the assignment that the rule undoes."""
        return self._transform.overwrites(var)

    def take_pending(self, var):
        """The whole cotangent of ``var`` if the sweep holds it as a value rather than in an
        adjoint variable (a single-use temporary): handed over once, then forgotten. Else None."""
        return self._transform.adj_values.pop(var, None)

    def adjoint(self, var):
        """The variable accumulating ``var``'s cotangent. When ``is_overwritten(var)``, the rule
        reads it, then resets it with ``zeros_like`` for the value before the assignment."""
        return self._transform.adjoint(var)

    def take_cotangent(self, var, b):
        """The cotangent of the region's output ``var`` (zeros if it has none), taken whole:
        a pending value, or the adjoint, which is then reset to zero when ``var`` is
        overwritten (the region assigns it; its value before gets its own cotangent)."""
        pending = self.take_pending(var)
        if pending is not None:
            return pending
        if not self.is_active(var):
            return b.call("zeros_like", var)
        adj = self.adjoint(var)
        if self.is_overwritten(var):
            snapshot = b.emit("alias", [adj])
            snapshot.is_temp = False
            b.emit("zeros_like", [var], target=adj)
            return snapshot
        return adj

    def accumulate(self, b, var, cotangent):
        """Emit into ``b`` the adding of ``cotangent`` (``var``'s shape, or broadcast to it) to
        ``var``'s adjoint."""
        self._transform.accumulate(b, var, cotangent, None, None)

    def kept_variables(self):
        """The variables the rule must not remove even if it does not read them: the primal
        variables and the adjoints made so far."""
        return set(self._transform.primal_vars) | set(self._transform.adjoints.values())
