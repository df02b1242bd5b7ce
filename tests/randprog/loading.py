"""Write a generated program to a real ``.py`` file and import it (adcompile needs
``inspect.getsource``, so programs cannot be exec'd from a string)."""
import importlib.util
import itertools
import os
import sys
import tempfile

_FOLDER = None
_COUNTER = itertools.count()


def program_folder():
    global _FOLDER
    if _FOLDER is None:
        _FOLDER = tempfile.mkdtemp(prefix=f"randprog_{os.getpid()}_")
    return _FOLDER


def load_module(source, stem="prog"):
    """Import ``source`` as a fresh module (a new file and module name every call)."""
    name = f"randprog_{stem}_{os.getpid()}_{next(_COUNTER)}"
    path = os.path.join(program_folder(), name + ".py")
    with open(path, "w") as handle:
        handle.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def unload_module(module):
    sys.modules.pop(module.__name__, None)
    try:
        os.remove(module.__file__)
    except OSError:
        pass
