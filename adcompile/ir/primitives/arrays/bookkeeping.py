"""Reverse-mode bookkeeping: placeholders that give a not-yet-assigned variable its type, tapes
for values saved in loops, and loop trip counts. Not computations on values."""
from ...types import I8, NONE_T
from ..declare import ALLOCATION, BOOKKEEPING, NON_DIFFERENTIABLE, RULE_ONLY, define
from ..emission import placeholder_text
from ..type_rules import fixed

define("placeholder", lambda t, p, c=None: p["type"], lambda t, p: placeholder_text(p["type"]),
       kinds=ALLOCATION | {BOOKKEEPING, RULE_ONLY})
define("new_tape", fixed(NONE_T), "rt.new_tape(_0)", kinds=ALLOCATION | {BOOKKEEPING, RULE_ONLY})
# range_len(start, stop, step): the trip count of a for loop (also the frontend's, for while loops)
define("range_len", fixed(I8), "rt.range_len(_0, _1, _2)", kinds={NON_DIFFERENTIABLE, BOOKKEEPING})
# checkpointed loops (transforms/reverse/checkpointing.py): the number of snapshots, and the
# steps to advance before the next snapshot of the binomial schedule
define("checkpoint_snapshots", fixed(I8), "rt.checkpoint_snapshots(_0, _1, _2)",
       kinds={NON_DIFFERENTIABLE, BOOKKEEPING})
define("revolve_advance", fixed(I8), "rt.revolve_advance(_0, _1)", kinds={NON_DIFFERENTIABLE, BOOKKEEPING})
