"""Copying IR with variables renamed: used to inline one IR function into another."""
from .nodes import (AccumItem, Assign, Comment, Const, CustomCall, For, Function, If, Pop, Push, SetItem, Var,
                    While)


class Renamer:
    """Maps the Vars of a source function to fresh Vars of the destination function."""

    def __init__(self, namer, mapping=None):
        self.namer = namer
        self.mapping = dict(mapping or {})

    def __call__(self, atom):
        if atom is None or isinstance(atom, Const):
            return atom
        if atom not in self.mapping:
            self.mapping[atom] = Var(self.namer.fresh(atom.name), atom.type, is_temp=atom.is_temp)
        return self.mapping[atom]

    def items(self, items):
        return [(item[0], *[self(p) for p in item[1:]]) for item in items]


def clone_block(block, rename):
    out = []
    for stmt in block:
        out.append(clone_statement(stmt, rename))
    return out


def clone_statement(stmt, rename):
    if isinstance(stmt, Assign):
        return Assign(rename(stmt.target), stmt.prim, [rename(a) for a in stmt.args], dict(stmt.params),
                      stmt.loc, stmt.inplace)
    if isinstance(stmt, AccumItem):
        return AccumItem(rename(stmt.array), rename(stmt.value), rename.items(stmt.items), stmt.loc)
    if isinstance(stmt, SetItem):
        return SetItem(rename(stmt.array), rename(stmt.value), rename.items(stmt.items), stmt.loc)
    if isinstance(stmt, Push):
        return Push(rename(stmt.tape), rename(stmt.value), stmt.loc)
    if isinstance(stmt, Pop):
        return Pop(rename(stmt.target), rename(stmt.tape), stmt.loc)
    if isinstance(stmt, If):
        return If(rename(stmt.cond), clone_block(stmt.body, rename), clone_block(stmt.orelse, rename), stmt.loc,
                  stmt.unfused_fallback)
    if isinstance(stmt, For):
        return For(rename(stmt.index), rename(stmt.start), rename(stmt.stop), rename(stmt.step),
                   clone_block(stmt.body, rename), stmt.loc)
    if isinstance(stmt, While):
        return While(clone_block(stmt.cond_body, rename), rename(stmt.cond), clone_block(stmt.body, rename),
                     stmt.loc)
    if isinstance(stmt, CustomCall):
        return CustomCall([rename(v) for v in stmt.outputs], [rename(a) for a in stmt.inputs],
                          clone_block(stmt.forward, rename), stmt.info, stmt.loc)
    if isinstance(stmt, Comment):
        return Comment(stmt.text)
    raise TypeError(f"cannot clone {stmt!r}")


def inline_function(fn, args, namer, block, loc=None):
    """Append ``fn``'s body to ``block`` with its parameters bound to ``args``; returns the
    atoms of its results. Parameters are copied into fresh variables first, since the body
    may assign them."""
    rename = Renamer(namer)
    for param, arg in zip(fn.params, args):
        if isinstance(arg, Const):
            rename.mapping[param] = arg
            continue
        local = rename(param)
        block.append(Assign(local, "alias", [arg], loc=loc))
    block.extend(clone_block(fn.body, rename))
    return [rename(a) for a in fn.results]


class _SameVars:
    """A renaming that keeps every variable: cloning with it copies statements only."""

    def __call__(self, atom):
        return atom

    def items(self, items):
        return [tuple(item) for item in items]


def copy_function(fn):
    """A copy of ``fn`` with new statement objects over the same variables, so passes that
    rewrite statements in place cannot reach IR shared with other functions."""
    copy = Function(fn.name, list(fn.params), clone_block(fn.body, _SameVars()), list(fn.results),
                    fn.returns_tuple, fn.source_file)
    for name in ("hidden_values", "state_params", "user_names"):
        if hasattr(fn, name):
            setattr(copy, name, getattr(fn, name))
    return copy
