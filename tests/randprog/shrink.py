"""Shrink a failing program to a small reproduction.

Greedy delta debugging over the module's syntax tree: delete statements, replace a compound
statement (if/for/while) by its body, replace an expression by one of its sub-expressions,
drop helpers and unused arguments. A candidate is kept only if it still fails with the same
failure kind (same oracle, or same exception type at the same stage).
"""
import ast
import copy
import dataclasses
import time

import numpy as np

from .oracles import check_program

STATEMENT_LISTS = ("body", "orelse")


def _statement_slots(tree):
    """(node index in walk order, field, position) of every statement in every block."""
    for i, node in enumerate(ast.walk(tree)):
        for field in STATEMENT_LISTS:
            block = getattr(node, field, None)
            if isinstance(block, list):
                for j in range(len(block)):
                    yield i, field, j


def _expression_slots(tree):
    """(node index, child index) pairs: replace expression node by one of its sub-expressions."""
    for i, node in enumerate(ast.walk(tree)):
        if not isinstance(node, ast.expr) or isinstance(node, (ast.Name, ast.Constant)):
            continue
        children = [c for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)
                    and not isinstance(c, (ast.Slice,))]
        for c in range(len(children)):
            yield i, c


def _replace_node(tree, old, new):
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return True
            if isinstance(value, list):
                for k, item in enumerate(value):
                    if item is old:
                        value[k] = new
                        return True
    return False


def candidates(tree):
    """Smaller variants of ``tree``, roughly largest reductions first."""
    for i, field, j in list(_statement_slots(tree)):
        new = copy.deepcopy(tree)
        block = getattr(list(ast.walk(new))[i], field)
        del block[j]
        if not block and field == "body":
            block.append(ast.Pass())
        yield new
    for i, field, j in list(_statement_slots(tree)):
        stmt = getattr(list(ast.walk(tree))[i], field)[j]
        for inner in ("body", "orelse"):
            if isinstance(stmt, (ast.If, ast.For, ast.While)) and getattr(stmt, inner):
                new = copy.deepcopy(tree)
                block = getattr(list(ast.walk(new))[i], field)
                block[j:j + 1] = getattr(block[j], inner)
                yield new
    for i, c in list(_expression_slots(tree)):
        new = copy.deepcopy(tree)
        node = list(ast.walk(new))[i]
        child = [x for x in ast.iter_child_nodes(node) if isinstance(x, ast.expr)
                 and not isinstance(x, ast.Slice)][c]
        if _replace_node(new, node, child):
            yield new


def _unused_arguments(tree, names):
    entry = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    used = {n.id for n in ast.walk(entry) if isinstance(n, ast.Name)}
    return [k for k, name in enumerate(names) if name not in used]


def _drop_argument(program, tree, k):
    tree = copy.deepcopy(tree)
    entry = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "f")
    del entry.args.args[k]
    args = program.args[:k] + program.args[k + 1:]
    names = program.arg_names[:k] + program.arg_names[k + 1:]
    return dataclasses.replace(program, source=ast.unparse(tree) + "\n", args=args, arg_names=names)


def shrink(program, kind, backend="python", second_order=False, compare_backends=False,
           budget_seconds=120.0, **oracles):
    """The smallest program found that still fails with ``kind`` (and its outcome); ``backend``
    is a mode of ``modes.py``, ``oracles`` further keywords of ``check_program``."""
    deadline = time.monotonic() + budget_seconds

    def still_fails(candidate):
        outcome = check_program(candidate, backend, second_order, compare_backends, **oracles)
        return outcome if outcome.kind == kind else None

    best = program
    best_outcome = still_fails(program)
    if best_outcome is None:
        return program, None
    changed = True
    while changed and time.monotonic() < deadline:
        changed = False
        tree = ast.parse(best.source)
        for k in reversed(_unused_arguments(tree, best.arg_names)):
            if len(best.args) > 1:
                candidate = _drop_argument(best, tree, k)
                outcome = still_fails(candidate)
                if outcome:
                    best, best_outcome, changed = candidate, outcome, True
                    tree = ast.parse(best.source)
        for new in candidates(tree):
            if time.monotonic() > deadline:
                break
            try:
                source = ast.unparse(ast.fix_missing_locations(new)) + "\n"
            except Exception:  # noqa: BLE001  (a replacement that does not print)
                continue
            if len(source) >= len(best.source):
                continue
            candidate = dataclasses.replace(best, source=source)
            outcome = still_fails(candidate)
            if outcome:
                best, best_outcome, changed = candidate, outcome, True
                break
    return best, best_outcome


def format_args(args):
    parts = []
    for a in args:
        if isinstance(a, np.ndarray):
            dtype = ", dtype=np.float32" if a.dtype == np.float32 else ""
            parts.append(f"np.array({a.tolist()!r}{dtype})")
        else:
            parts.append(repr(a))
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def snippet(program, outcome, backend):
    """A self-contained reproduction: the program, its arguments and what is wrong."""
    detail = (outcome.detail or "").replace("\n", " ")[:400]
    how = {"lowered": "lowered: backend='python' with ADCOMPILE_FUSE=all"}.get(backend, backend)
    return (f"# randprog failure {outcome.kind} (seed {program.seed}, mode {how})\n"
            f"# {detail}\n"
            f"{program.source}\n"
            f"ARGS = {format_args(program.args)}\n")
