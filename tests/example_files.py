"""The repository's example scripts (``examples/*.py``), loaded as modules by the tests that
check them or reuse what they define."""
import importlib.util
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def load_example(name, module_name=None):
    """``examples/<name>.py`` run as a fresh module named ``module_name`` (default
    ``example_<name>``): a test that must not share the module (or what adcompile caches for its
    functions) with another test file gives a name of its own."""
    spec = importlib.util.spec_from_file_location(module_name or f"example_{name}", EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
