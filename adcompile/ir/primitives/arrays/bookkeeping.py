"""Reverse-mode bookkeeping: placeholders that give a not-yet-assigned variable its type, tapes
for values saved in loops, and loop trip counts. Not computations on values."""
from ...types import B1, F8, I8, NONE_T, Type
from ..declare import (ALLOCATION, BOOKKEEPING, C_ORDERED_RESULT, NEVER_MERGED, NON_DIFFERENTIABLE, PASSES_VALUES,
                       RULE_ONLY, VIEW, define)
from ..emission import placeholder_text
from ..type_rules import fixed, same_as_first

define("placeholder", lambda t, p, c=None: p["type"], lambda t, p: placeholder_text(p["type"]),
       kinds=ALLOCATION | {BOOKKEEPING, RULE_ONLY, C_ORDERED_RESULT})
define("new_tape", fixed(NONE_T), "rt.new_tape(_0)", kinds=ALLOCATION | {BOOKKEEPING, RULE_ONLY})
# range_len(start, stop, step): the trip count of a for loop (also the frontend's, for while loops)
define("range_len", fixed(I8), "rt.range_len(_0, _1, _2)", kinds={NON_DIFFERENTIABLE, BOOKKEEPING})
# checkpointed loops (transforms/reverse/checkpointing.py): the number of snapshots, and the
# steps to advance before the next snapshot of the binomial schedule
define("checkpoint_snapshots", fixed(I8), "rt.checkpoint_snapshots(_0, _1, _2)",
       kinds={NON_DIFFERENTIABLE, BOOKKEEPING})
define("revolve_advance", fixed(I8), "rt.revolve_advance(_0, _1)", kinds={NON_DIFFERENTIABLE, BOOKKEEPING})
# any_layout(x[, marker]): x, typed by numba as an array of any layout -- unless the marker says
# the arguments are 'C'-ordered and x is 'C'; c_ordered_marker(*array arguments) makes the
# marker. What an array carried around a loop enters the loop as (lowering/loop_layouts.py,
# after differentiation).
define("any_layout", same_as_first, lambda t, p: "rt.any_layout(_0)" if len(t) == 1 else "rt.any_layout(_0, _1)",
       kinds={VIEW, NEVER_MERGED, PASSES_VALUES, BOOKKEEPING, RULE_ONLY, NON_DIFFERENTIABLE}, shape_of=0)
define("c_ordered_marker", fixed(Type(F8.dtype, 1)),
       lambda t, p: "rt.c_ordered_marker((" + "".join(f"_{k}, " for k in range(len(t))) + "))",
       kinds={BOOKKEEPING, RULE_ONLY, NON_DIFFERENTIABLE, NEVER_MERGED})
# cotangents_nonzero(g0, g1, ...): whether a backward loop receives a nonzero cotangent, the
# guard of a loop skipped when all are zero (transforms/reverse/zero_skips.py)
define("cotangents_nonzero", fixed(B1),
       lambda t, p: " or ".join(f"_{k} != 0.0" for k in range(len(t))) if len(t) == 1 else
       "(" + " or ".join(f"_{k} != 0.0" for k in range(len(t))) + ")",
       kinds={BOOKKEEPING, RULE_ONLY, NON_DIFFERENTIABLE})
