"""The package's import structure: layers import only downward, and nothing imports in a cycle.

The import graph is read from the source with ``ast`` (no module is run): an edge ``a -> b``
for every ``import``/``from ... import`` of an adcompile module ``b`` in module ``a``.
Module-level imports must form an acyclic graph that respects ``LAYERS``. Imports inside
functions are allowed only for heavy optional libraries (numba, dask, ...) and the adcompile
modules that import them, with a comment saying so.
"""
import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "adcompile"

# Lowest first. A module may import modules of its own layer and of the layers below it.
# A module belongs to the layer of the longest prefix listed (a package covers its modules).
LAYERS = [
    ("base", ["adcompile.errors", "adcompile.boundary", "adcompile.version", "adcompile.custom"]),
    # pytrees: flattening nested containers to leaves, plain Python
    ("tree", ["adcompile.tree"]),
    ("ir", ["adcompile.ir"]),
    ("passes", ["adcompile.passes"]),
    ("frontend", ["adcompile.frontend"]),
    ("transforms", ["adcompile.transforms"]),
    # IR -> IR for the code emitted for numba only (loop fusion), after differentiation
    ("lowering", ["adcompile.lowering"]),
    ("codegen", ["adcompile.codegen"]),
    ("runtime", ["adcompile.runtime"]),
    ("backend", ["adcompile.backend"]),
    # Modules as containers of arrays, without the compiler: module_compiler (three layers up) registers
    # its entry points in modules/dispatch.py, where this layer and the ones between find them.
    ("modules", ["adcompile.modules"]),
    # compiled and derived functions: per-signature IR, transformed, generated, loaded and run
    ("api", ["adcompile.api"]),
    # functions of Modules and pytrees compiled as functions of their leaves: the flattening at the
    # boundary, which calls of compiled and derived functions reach through modules/dispatch.py
    ("module compiler", ["adcompile.module_compiler"]),
    # the transforms built on derived functions (jvp, hvp, vjp flatten their arguments at the
    # module compiler's boundary), and derivatives called inside compiled code
    ("derivatives", ["adcompile.derivatives"]),
    ("inspection", ["adcompile.inspection"]),
    ("checks", ["adcompile.checks"]),
    ("libraries", ["adcompile.nn", "adcompile.optim", "adcompile.training"]),
    ("tools", ["adcompile.cli", "adcompile.dask", "adcompile.__main__", "adcompile"]),
]

# Third-party libraries that are slow to import or optional: imported inside the function
# that needs them, on a line whose comment says ``lazy``.
HEAVY = {"numba", "llvmlite", "scipy", "dask", "distributed", "pygments", "tqdm"}
# adcompile modules that import numba when imported: lazy like numba itself.
HEAVY_OWN = {"adcompile.runtime.numba_impls", "adcompile.runtime.nonfinite", "adcompile.backend.numba_cache"}


def module_files():
    """Module name -> (path, whether it is a package's ``__init__``)."""
    modules = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


MODULES = module_files()


def imported_modules(module, is_package, node):
    """The modules an import statement names (``from pkg import mod`` names ``pkg.mod``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    base = module.split(".") if is_package else module.split(".")[:-1]
    if node.level:
        base = base[:len(base) - node.level + 1]
    else:
        base = []
    target = ".".join(base + ([node.module] if node.module else []))
    return [f"{target}.{alias.name}" if f"{target}.{alias.name}" in MODULES else target for alias in node.names]


def import_statements(modules=MODULES):
    """(importer, imported, line, text of the line, at module level?) for every import."""
    found = []
    for module, (path, is_package) in modules.items():
        source = path.read_text()
        lines = source.splitlines()
        tree = ast.parse(source)
        top_level = {id(node) for node in tree.body}
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name in imported_modules(module, is_package, node):
                    found.append((module, name, node.lineno, lines[node.lineno - 1], id(node) in top_level))
    return found


def module_graph(modules=MODULES):
    """importer -> the adcompile modules it imports at module level."""
    graph = {module: set() for module in modules}
    for importer, name, _, _, top_level in import_statements(modules):
        if top_level and name in modules and name != importer:
            graph[importer].add(name)
    return graph


def find_cycle(graph):
    """One import cycle as a list of modules, or None."""
    state, stack = {}, []

    def visit(module):
        state[module] = "open"
        stack.append(module)
        for imported in sorted(graph[module]):
            if state.get(imported) == "open":
                return stack[stack.index(imported):] + [imported]
            if imported not in state:
                cycle = visit(imported)
                if cycle:
                    return cycle
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            cycle = visit(module)
            if cycle:
                return cycle
    return None


def layer_of(module):
    best = None
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (module.startswith(prefix + ".") and prefix != "adcompile"):
                if best is None or len(prefix) > best[1]:
                    best = (rank, len(prefix))
    return None if best is None else best[0]


def test_every_module_has_a_layer():
    assert [m for m in MODULES if layer_of(m) is None] == []


def test_module_level_imports_have_no_cycle():
    assert find_cycle(module_graph()) is None


def test_module_level_imports_go_down_the_layers():
    upward = [f"{importer} ({LAYERS[layer_of(importer)][0]}) imports {imported} "
              f"({LAYERS[layer_of(imported)][0]})"
              for importer, names in module_graph().items() for imported in names
              if layer_of(imported) > layer_of(importer)]
    assert upward == []


def test_imports_inside_functions_are_lazy_heavy_ones():
    unexplained = []
    for importer, name, line, text, top_level in import_statements():
        if top_level:
            continue
        if name.split(".")[0] in HEAVY or name in HEAVY_OWN:
            if "lazy" not in text:
                unexplained.append(f"{importer}:{line}: {text.strip()}  (say '# lazy: ...' on the line)")
        else:
            unexplained.append(f"{importer}:{line}: {text.strip()}  (a light module: import it at the top)")
    assert unexplained == []


def test_the_checks_find_an_introduced_cycle_and_an_upward_import(tmp_path):
    package = tmp_path / "adcompile"
    (package / "ir").mkdir(parents=True)
    (package / "frontend").mkdir()
    for folder in (package, package / "ir", package / "frontend"):
        (folder / "__init__.py").write_text("")
    (package / "ir" / "nodes.py").write_text("from ..frontend import parse\n")
    (package / "frontend" / "parse.py").write_text("from ..ir import nodes\n")
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(tmp_path).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    global MODULES
    saved, MODULES = MODULES, modules  # imported_modules resolves names against MODULES
    try:
        graph = module_graph(modules)
    finally:
        MODULES = saved
    assert find_cycle(graph) in (["adcompile.ir.nodes", "adcompile.frontend.parse", "adcompile.ir.nodes"],
                                 ["adcompile.frontend.parse", "adcompile.ir.nodes", "adcompile.frontend.parse"])
    assert layer_of("adcompile.frontend.parse") > layer_of("adcompile.ir.nodes")


def test_each_module_imports_alone():
    """Every module imports with only what it imports itself: in one subprocess, for each module,
    ``sys.modules`` is emptied of adcompile and the package root is a bare stand-in (its
    ``__init__``, which imports everything, is tested by the next test)."""
    names = [m for m in MODULES if m not in ("adcompile", "adcompile.__main__")]  # __main__ runs the CLI
    script = textwrap.dedent(f"""
        import importlib, sys, traceback, types
        failed = []
        for name in {names!r}:
            for loaded in [m for m in sys.modules if m == "adcompile" or m.startswith("adcompile.")]:
                del sys.modules[loaded]
            root = types.ModuleType("adcompile")
            root.__path__ = [{str(PACKAGE)!r}]
            sys.modules["adcompile"] = root
            try:
                importlib.import_module(name)
            except Exception:
                failed.append(name + ": " + traceback.format_exc(limit=-1).strip().splitlines()[-1])
        print("\\n".join(failed))
        sys.exit(1 if failed else 0)
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                            cwd=PACKAGE.parent)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("root", ["adcompile", "adcompile.frontend", "adcompile.transforms.reverse",
                                  "adcompile.backend.loader", "adcompile.cli", "adcompile.nn"])
def test_subpackage_roots_import_in_a_fresh_interpreter(root):
    result = subprocess.run([sys.executable, "-c", f"import {root}"], capture_output=True, text=True,
                            timeout=60, cwd=PACKAGE.parent)
    assert result.returncode == 0, result.stderr


def test_layers_are_folders():
    loose = sorted(name for name, (path, is_package) in MODULES.items()
                   if name.count(".") == 1 and not is_package)
    assert loose == ["adcompile.__main__", "adcompile.boundary", "adcompile.errors", "adcompile.version"], loose
    for _, prefixes in LAYERS:
        for prefix in prefixes:
            assert prefix in MODULES, prefix
            assert MODULES[prefix][1] or prefix in ("adcompile.errors", "adcompile.boundary", "adcompile.version",
                                                    "adcompile.__main__"), prefix
