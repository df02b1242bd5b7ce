"""One declaration per primitive: no table keyed by primitive names outside ``ir/primitives/``.

Everything the compiler knows about a primitive (type, template, kinds, derivative rules, shape
and batch rules, fill value, fused accumulator, constant folding, the numpy names and reductions
it implements) is declared once, with ``define(...)`` in its family module. Code elsewhere asks
the declaration (``primitive(name).fold``, ``has_kind(name, Kind.COMMUTATIVE)``); a dict or set keyed by primitive
names, or a module-level tuple of them, is a second list that a new primitive would have to be
added to. The source is read with ``ast``: a primitive-name string literal is flagged as a key of
a dict literal, an element of a set literal, or an element of a tuple/list/set bound to a name at
module or class level (``__all__`` excepted). Comparisons in code (``stmt.prim == "getitem"``, ``prim in ("a", "b")``
inside a function) are not tables and are not flagged.
"""
import ast
import pathlib

from adcompile.ir.primitives import PRIMITIVES

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "adcompile"
DECLARATIONS = PACKAGE / "ir" / "primitives"

# (file relative to the package, table name): literals that coincide with primitive names but are
# not primitive tables. Keep it short; each says what the names are.
ALLOWED = {
    # the names of Python's builtin functions the frontend handles (builtin.abs, builtin.min, ...)
    ("frontend/resolve.py", "_BUILTIN_NAMES"),
    # the reduction modes of a distributed loss ("mean" or "sum"), not the primitives
    ("dask/reduction.py", "REDUCTIONS"),
    # Adagrad's state (its running sum of squares), not the primitive
    ("optim/adagrad.py", "state_names"),
    # the runtime functions rt.mul_nz/rt.div_nz that helpers.py builds lazily from numba ufuncs
    ("runtime/helpers.py", "_ZERO_SAFE"),
    # Python's operators and keywords in generated source text (where a long line may break)
    ("codegen/line_wrap.py", "_BINARY"),
    ("codegen/line_wrap.py", "_KEYWORDS"),
}


def _strings(nodes, names):
    return [node.value for node in nodes if isinstance(node, ast.Constant) and node.value in names]


def _sequence_literal(node):
    """The elements of a tuple/list/set literal, or of ``frozenset((...))``/``set([...])``."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return node.elts
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set") \
            and len(node.args) == 1 and isinstance(node.args[0], (ast.Tuple, ast.List, ast.Set)):
        return node.args[0].elts
    return []


def _bound_names(statement):
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
    return [t.id for t in targets if isinstance(t, ast.Name)]


def table_keys(source, names):
    """(line, table name or None, [primitive names]) for each table keyed by ``names`` in ``source``."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = _strings([k for k in node.keys if k is not None], names)
        elif isinstance(node, ast.Set):
            keys = _strings(node.elts, names)
        else:
            continue
        if keys:
            found.append((node.lineno, None, keys))
    scopes = [tree] + [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    for scope in scopes:
        for statement in scope.body:
            if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None \
                    and "__all__" not in _bound_names(statement):  # an export list is not a table
                keys = _strings(_sequence_literal(statement.value), names)
                if keys and not isinstance(statement.value, ast.Set):  # sets are counted above
                    found.append((statement.lineno, ", ".join(_bound_names(statement)), keys))
    return found


def _table_name(source, line):
    """The module-level name the table on ``line`` is bound to (for the allow-list), or None."""
    for statement in ast.parse(source).body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.lineno <= line <= statement.end_lineno:
            return ", ".join(_bound_names(statement))
    return None


def test_no_table_is_keyed_by_primitive_names_outside_the_declarations():
    names = set(PRIMITIVES)
    problems = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if DECLARATIONS in path.parents:
            continue
        source = path.read_text()
        relative = path.relative_to(PACKAGE).as_posix()
        for line, name, keys in table_keys(source, names):
            name = name or _table_name(source, line)
            if (relative, name) in ALLOWED:
                continue
            problems.append(f"adcompile/{relative}:{line}: {name or 'a literal'} is keyed by the primitives "
                            f"{keys[:5]}: declare the fact with each primitive in ir/primitives/ instead")
    assert not problems, "\n".join(problems)


def test_the_check_finds_tables_of_primitive_names():
    names = {"sum", "mean", "exp"}
    source = '''
FUSED = ("sum", "mean")
START = {"sum": 0.0}
class Pass:
    KEEP = frozenset(["exp"])
def f(stmt):
    if stmt.prim in ("sum", "max"):  # a comparison, not a table
        return {"exp"}
    return stmt.prim == "mean"
'''
    found = table_keys(source, names)
    assert sorted((line, keys) for line, _, keys in found) == [(2, ["sum", "mean"]), (3, ["sum"]), (5, ["exp"]),
                                                               (8, ["exp"])]


def test_every_primitive_has_the_rules_its_kinds_need():
    """A shape rule for every primitive with an array result from elementwise, reduction or
    declared rules: the declaration, not a table, supplies it."""
    for name in ("add", "exp", "sum", "matmul", "getitem", "zeros", "solve", "where"):
        assert PRIMITIVES[name].shape is not None, name
    assert PRIMITIVES["zeros_like"].fill == 0 and PRIMITIVES["ones_like"].fill == 1
    assert PRIMITIVES["max"].accumulator.step == "maximum" and PRIMITIVES["sum"].accumulator.step is None


def test_every_kernel_a_template_calls_is_a_runtime_function():
    """A primitive names its runtime kernel in its template (``"rt.erfcx(_0)"``); each named kernel
    is a function of a family module of runtime/kernels/ (or a zero-safe product)."""
    import re

    from adcompile.runtime import helpers

    called = set()
    for path in DECLARATIONS.rglob("*.py"):
        called |= set(re.findall(r"\brt\.(\w+)\(", path.read_text()))
    assert {"erfcx", "cumsum_axis", "matmul", "unbroadcast"} <= called
    missing = sorted(name for name in called if name not in helpers.__all__ and name not in helpers._ZERO_SAFE)
    assert not missing, f"templates call rt.{missing} that no module of runtime/kernels/ defines"
