"""Checking an optimizer's hyperparameters where PyTorch's optimizers check theirs: when the
optimizer (or a parameter group) is built and when a saved state is loaded, so ``lr='fast'`` or
``betas=(0.9, 1.5)`` fails at the line that wrote it, not at a later ``step()``.

Each optimizer declares its rules as data, ``{name: rule}``:

    NON_NEGATIVE   a real number >= 0 (lr, eps, weight_decay, momentum, ...)
    REAL           any finite real number (SGD's dampening)
    BETAS          a pair of numbers, each in [0, 1)
    FLAG           True or False (nesterov, amsgrad, maximize, ...)
"""
import math
import numbers

import numpy as np

from .errors import OptimizerError

NON_NEGATIVE = "a number >= 0"
REAL = "a finite number"
BETAS = "a pair of numbers in [0, 1)"
FLAG = "True or False"

_EXAMPLES = {NON_NEGATIVE: "0.01", REAL: "0.0", BETAS: "(0.9, 0.999)", FLAG: "True"}
# PyTorch's words for the names whose message it spells out ("Invalid learning rate: -1")
_WORDS = {"lr": "learning rate", "eps": "epsilon value"}


def check_hyperparameters(optimizer_name, group, rules):
    """Raise ``OptimizerError`` naming the first entry of ``group`` that breaks its rule."""
    for name, rule in rules.items():
        if name in group and not _obeys(group[name], rule):
            value = group[name]
            word = _WORDS.get(name, f"{name} value")
            raise OptimizerError(f"Invalid {word}: {value!r} ({optimizer_name}'s {name} must be {rule}, "
                                 f"e.g. {optimizer_name}(params, {name}={_EXAMPLES[rule]}))")


def _is_number(value):
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)) \
        and math.isfinite(value)


def _obeys(value, rule):
    if rule == FLAG:  # 0 and 1 pass, as they do in an ``if``
        return isinstance(value, (bool, np.bool_, numbers.Integral)) and value in (0, 1)
    if rule == BETAS:
        return isinstance(value, (tuple, list)) and len(value) == 2 \
            and all(_is_number(beta) and 0.0 <= beta < 1.0 for beta in value)
    if not _is_number(value):
        return False
    return rule == REAL or value >= 0.0
