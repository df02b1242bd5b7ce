"""What a translation read from outside the function: global names, closure cells and module
attributes, with the objects they held then.

A compile reads the values of globals at compile time (``K`` in ``return K * np.sin(x)``, also
through helpers in other modules: ``helpmod.K``). A cache of compiled code for a plain Python
function is valid only while every such read would give the same object, so the frontend
records each one here and :func:`still_hold` checks them (identity, not contents: an array
global is passed in at each call, a number or function rebound is a new object).
"""

_MISSING = object()


class Scope:
    """Where a function's free names come from: its closure cells, then its module's globals."""

    def __init__(self, pyfunc):
        self.globals = pyfunc.__globals__
        self.cells = dict(zip(pyfunc.__code__.co_freevars, pyfunc.__closure__ or ()))

    def source_of(self, name):
        """(container, key) to read ``name`` from again later."""
        if name in self.cells:
            return self.cells[name], None
        return self.globals, name


class ExternalReads(tuple):
    """The ``(container, key, value)`` reads of one translation, kept on its IR ``Function``.
    They are facts about objects outside the IR: a copy of the IR shares them (a copied value
    would no longer be the object read, and modules and cells cannot be copied)."""

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


def record(reads, container, key, value):
    """Note in ``reads`` (see ``Translator.external_reads``) that ``container[key]`` gave ``value``."""
    reads.setdefault((id(container), key), (container, key, value))


def current_value(container, key):
    """The object ``container`` holds under ``key`` now (a cell's contents when ``key`` is None,
    a dict's item, or a module's attribute)."""
    if key is None:
        try:
            return container.cell_contents
        except ValueError:
            return _MISSING
    if isinstance(container, dict):
        return container.get(key, _MISSING)
    return getattr(container, key, _MISSING)


def still_hold(reads):
    """Whether every ``(container, key, value)`` read still gives the same object."""
    return all(current_value(container, key) is value for container, key, value in reads)
