"""The one sanitiser of the names adcompile gives generated functions and their files.

A generated function's name comes from the user's code (a function's ``__name__`` or
``__qualname__``, a Module's or an optimizer's class name), and it names the function in the
generated source, its file ``<name>_<digest>.py`` in the cache folder, numba's cache files and
the module in ``sys.modules``. So it must be a Python identifier made of ASCII letters, digits
and ``_`` only, not too long for a file name, and never a path: ``/abs/dir/pwn``,
``__pycache__/../../x`` or ``<locals>_loss`` would otherwise name a file outside the cache
folder or a function Python cannot parse. :func:`safe_name` keeps a name that already obeys
those rules unchanged, and otherwise keeps its letters, digits and underscores and appends a
digest of the whole original (so two different names never meet).
"""
import hashlib
import keyword
import re

MAX_LENGTH = 80  # leaves room for "_<digest>.py", numba's suffixes and "check_" under 255 bytes
_SAFE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_OTHER = re.compile(r"[^A-Za-z0-9_]+")


def is_safe_name(name):
    return (isinstance(name, str) and len(name) <= MAX_LENGTH and _SAFE.match(name) is not None
            and not keyword.iskeyword(name))


def safe_name(name):
    """``name`` if it is a safe identifier, else one made from it: letters, digits and ``_``
    kept, the rest replaced, plus 8 hex digits of sha256 of the original.

    >>> safe_name("loss_grad")
    'loss_grad'
    >>> safe_name("/abs/dir/pwn").startswith("abs_dir_pwn_")
    True
    """
    name = str(name)
    if is_safe_name(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    kept = _OTHER.sub("_", name).strip("_")[:MAX_LENGTH - 10] or "fn"
    if kept[0].isdigit():
        kept = "fn_" + kept[:MAX_LENGTH - 13]
    return f"{kept}_{digest}"
