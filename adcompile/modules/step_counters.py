"""Buffers that advance after every training-mode step (Dropout's random streams).

A module class names them in ``_adcompile_step_counters``; ``model(x)``, ``adcompile.backward``
and the compiled programs of ``train_step`` and ``fit`` advance them after each step.
"""


def step_counters(model):
    """The buffers (dotted name, array) that advance after every training-mode step."""
    counters = []
    for prefix, module in model.named_modules():
        if not module.training:
            continue
        for name in getattr(type(module), "_adcompile_step_counters", ()):
            counters.append((f"{prefix}.{name}" if prefix else name, module._buffers[name]))
    return counters


def advance(model):
    for _, counter in step_counters(model):
        counter += 1
