"""The reverse transform's driver: state, the passes to a fixpoint, and the assembled function.

``ReverseTransform`` combines the three parts of reverse mode, each a mixin in its own file:
``TapingPlan`` (``taping.py``: the forward sweep and what it saves), ``Liveness``
(``liveness.py``: what the backward sweep reads, and the fixpoint over both sweeps) and
``AdjointSweep`` (``sweep.py``: the backward sweep). Every attribute is set here, in
``__init__`` or in ``start_pass`` (the per-round state).
"""
import os

from ...ir.builder import Builder, const
from ...ir.memory import memory_roots
from ...ir.nodes import Comment, Function, Var, While, walk
from ...ir.shapes import infer_shapes
from ...passes.activity import active_vars
from ..arguments import copy_written_arguments, inherit_state_params
from ..scopes import Scopes, check_shared_memory_writes
from ..zero_skips import guard_zero_cotangent_loops
from .context import ReverseContext
from .liveness import Liveness, enclosing_loops
from .sweep import AdjointSweep, check_rules
from .taping import GROWING_TAPE_CAPACITY, TapingPlan

# ``ADCOMPILE_ZERO_SKIP=0``: backward loops run also where their cotangents are zero (zero_skips.py)
ZERO_SKIPS = os.environ.get("ADCOMPILE_ZERO_SKIP", "1") != "0"


class ReverseTransform(TapingPlan, Liveness, AdjointSweep):
    """Reverse mode of one IR function (see the package docstring)."""

    def __init__(self, fn, wrt, namer, mode="grad"):
        self.fn = fn
        self.wrt = [fn.params[k] for k in wrt]
        self.namer = namer
        self.mode = mode
        self.want_values = mode != "grad"  # whether the primal results are returned too
        check_shared_memory_writes(fn)
        self.scopes = Scopes(fn)
        self.order = {id(stmt): k for k, stmt in enumerate(walk(fn.body))}
        self.loops = enclosing_loops(fn.body)
        self.while_loops = {id(s) for s in walk(fn.body) if isinstance(s, While)}
        self.read_sites = {}     # primal Var -> ids of the statements whose backward reads it
        results = [a for a in fn.results if isinstance(a, Var)]
        self.active = active_vars(fn.body, self.wrt, results)
        check_rules(fn.body, self.active)
        self.primal_vars = set(self.scopes.info) | set(fn.params)
        # A view (``w[1:]``, ``x.T``, ``y = x``) read by the backward sweep reads the memory of
        # the arrays it views: a later write into them must be undone before that read.
        self.memory = memory_roots(fn.body, fn.params)
        for var in self.primal_vars:
            namer.reserve(var.name)
        # arrays assigned more than once with shapes that may differ: their shape reads count too
        shapes = infer_shapes(fn)
        self.reshaped = {v for v in self.primal_vars if v.type.ndim and self.scopes.is_rebound(v, fn.params)
                         and not shapes.stable(v)}
        self.context = ReverseContext(self)  # what the reverse rules of regions (CustomCall) may use
        self.saves = {}          # key of a save -> where the value went (see ``TapingPlan.save``)
        self.needed = None       # the primal Vars the backward sweep reads (None: not known yet)
        self.save_count = 0      # saves emitted so far (``saves`` keeps its keys from round to round)
        self.results = list(fn.results)  # the results as the forward sweep leaves them
        self.cotangent_params = []  # vjp mode: one cotangent parameter per result
        self.seeded = set()      # results whose adjoint is initialised to their seed
        self.start_pass()

    def start_pass(self):
        """Reset the state of one round of both sweeps."""
        self.adjoints = {}       # primal Var -> adjoint Var
        self.adj_values = {}     # single-use temp -> the atom holding its whole cotangent
        self.backward_statements = []
        self.tapes = []
        self.counted_loop, self.counted_tapes = None, []
        self.growing_tapes = []  # (tape, top) of scalars saved in nested loops
        self.loop_stack = []     # the loops around the statement the forward sweep is at
        self.assigned_in_loop = {}  # id of a loop -> the variables its body assigns
        self.recomputable, self.recomputed_ids = {}, set()
        self.placeholders = []
        self.adjoint_inits = []  # (variable, block path) of each adjoint's zeros_like
        self.loop_records = {}
        self.restored = set()    # Vars whose forward values the backward sweep puts back

    def run(self):
        """The IR function of the derivative."""
        forward, backward = self.run_to_fixpoint()
        self.place_unassigned_reads()
        return self.assemble(forward, backward)

    def assemble(self, forward, backward):
        """The derivative function: placeholders and tapes, both sweeps, the gradients."""
        prologue = []
        b = Builder(self.namer, prologue)
        for var in self.placeholders:
            b.emit("placeholder", [], target=var, type=var.type)
        for tape, type_ in self.tapes:
            like = b.emit("placeholder", [], type=type_)
            b.emit("new_tape", [like], target=tape)
        for tape, top in self.growing_tapes:
            b.emit("empty", [const(GROWING_TAPE_CAPACITY)], target=tape, ndim=1, dtype=tape.type.dtype)
            b.emit("alias", [const(0)], target=top)
        copy_written_arguments(self.fn, b)
        epilogue = []
        b = Builder(self.namer, epilogue)
        grads = []
        for param in self.wrt:
            if param in self.active:
                adj = self.adjoint(param)
                grads.append(b.call("cast_like", adj, param) if param.type.dtype == "f4" else adj)
            else:
                grads.append(b.call("zeros_like", param))
        params = list(self.fn.params)
        if self.mode == "grad":
            results = grads
        else:
            params += self.cotangent_params
            results = list(self.results) + grads
        if ZERO_SKIPS:
            guard_zero_cotangent_loops(prologue + forward, backward, epilogue, results, self.primal_vars,
                                       self.adjoints.values(), self.namer)
        body = prologue + [Comment("forward")] + forward + [Comment("backward")] + backward + epilogue
        suffix = {"grad": "grad", "value_and_grad": "value_and_grad", "vjp": "vjp"}[self.mode]
        derived = Function(f"{self.fn.name}_{suffix}", params, body, results, True, self.fn.source_file)
        return inherit_state_params(derived, self.fn)
