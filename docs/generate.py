"""Fill the generated sections of the documentation by running adcompile.

Markdown files in docs/ contain sections between ``<!-- generated: NAME -->`` and
``<!-- end generated -->``; each NAME is a function below whose text is produced by running
the code (error messages, IR at each stage, command-line output, the API reference from the
docstrings), never written by hand.

    python docs/generate.py          rewrite the sections
    python docs/generate.py --check  exit 1 if a section is out of date (tests/docs/test_docs.py)
"""
import contextlib
import inspect
import io
import os
import re
import sys
import textwrap
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SNIPPETS = DOCS / "snippets"
SECTION = re.compile(r"(<!-- generated: (\w+) -->\n)(.*?)(<!-- end generated -->)", re.DOTALL)


def _relative(text):
    return text.replace(str(ROOT) + os.sep, "")


def _fence(text, language="text"):
    return f"```{language}\n{text.rstrip()}\n```\n"


def _snippet_module(name):
    if str(SNIPPETS) not in sys.path:
        sys.path.insert(0, str(SNIPPETS))
    return __import__(name)


# ----------------------------------------------------------------- sections
REJECTED = [  # (function in snippets/rejected.py, arguments, why)
    ("uses_try", (np.ones(3),), "Exceptions need control flow numba cannot compile."),
    ("uses_generator", (np.ones(3),), "A generator has no numba type; sum in a loop."),
    ("uses_comprehension", (np.ones(3),), "Lists of arrays have no numba type; write a loop."),
    ("uses_dict", (np.ones(3),), "Dicts are compile-time containers: their keys are constant strings."),
    ("reads_through_mask", (np.ones((3, 2)),), "`x[mask]` and `A[row_mask]` are read (their length is "
     "a run-time value); a mask combined with other indices is not."),
    ("no_rule", (np.eye(2),), "A numpy function without a derivative rule is an error, never a silent zero."),
    ("recursive", (np.ones(3), 2), "Calls are inlined, so recursion has no end."),
    ("writes_into_view", (np.ones(3),), "A write through shared memory cannot be differentiated as values."),
]


def rejected():
    import adcompile
    module = _snippet_module("rejected")
    parts = []
    for name, args, why in REJECTED:
        fn = adcompile.compile(getattr(module, name), backend="python")
        try:
            adcompile.grad(fn)(*args)
        except adcompile.AdCompileError as error:
            message = f"{type(error).__name__}: {error}"
        else:
            raise AssertionError(f"{name} was not rejected")
        parts.append(f"**`{name}`**: {why}\n\n" + _fence(_relative(message)))
    return "\n".join(parts)


def stages():
    import adcompile
    from adcompile import ir_stages
    module = _snippet_module("pipeline_example")
    fn = adcompile.compile(module.softplus_sum, backend="python")
    parts = [_fence(inspect.getsource(module.softplus_sum), "python")]
    stages = ir_stages(adcompile.grad(fn), np.ones(3), 2.0)
    for name, text in stages:
        if name == "lowered" and text == stages[-2][1]:
            parts.append("**lowered**: the same source (`backend=\"python\"` runs the differentiated code)\n")
            continue
        language = "python" if name in ("differentiated", "lowered") else "text"
        parts.append(f"**{name}**\n\n" + _fence(text, language))
    return "\n".join(parts)


def _run_cli(*argv):
    from adcompile.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.chdir(ROOT):
        status = main(list(argv), out=out, err=err)
    text = _relative(out.getvalue() + err.getvalue())  # the same text in any checkout
    return f"$ adcompile {' '.join(_quote(a) for a in argv)}\n{text}" + (f"(exit status {status})\n" if status else "")


def _quote(arg):
    return f'"{arg}"' if " " in arg else arg


def cli_examples():
    target = "docs/snippets/pipeline_example.py:softplus_sum"
    return _fence(_run_cli("source", target, "--grad", "--args", "x=(5,) k=()", "--no-color")) + "\n" + \
        _fence(_run_cli("check", target, "--args", "x=(5,) k=()", "--order", "2", "--backend", "python")) + "\n" + \
        _fence(_run_cli("check", "docs/snippets/wrong_backward.py:cubes", "--args", "x=(4,)",
                        "--backend", "python")) + "\n" + \
        _fence(_run_cli("source", "docs/snippets/rejected.py:uses_try"))


def cli_help():
    from adcompile.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    texts = [parser.format_help()] + [sub.choices[name].format_help() for name in ("source", "check", "cache")]
    return _fence("\n".join(texts).replace("usage: adcompile", "usage: adcompile"))


def _lines_mentioning(path, word, block):
    """The numbered lines of ``path`` that ``block(lines, k)`` selects around each mention of ``word``."""
    lines = (ROOT / path).read_text().splitlines()
    shown = sorted({j for k, line in enumerate(lines) if word in line for j in block(lines, k)})
    return f"`{path}`\n\n" + _fence("\n".join(f"{k + 1:4d}  {lines[k]}" for k in shown), "text")


def _comment_and_statement(lines, k):
    """Line k with the comment lines above it and the continuation lines of its statement."""
    first = k
    while first > 0 and lines[first - 1].lstrip().startswith("#"):
        first -= 1
    last = k
    while last + 1 < len(lines) and lines[last + 1].startswith(" ") and not lines[k].startswith(" "):
        last += 1
    return range(first, last + 1)


def _function(lines, k):
    """The whole function whose ``def`` is line k (nothing for other lines)."""
    if not lines[k].startswith("def "):
        return []
    last = k
    while last + 1 < len(lines) and (lines[last + 1].startswith(" ") or not lines[last + 1].strip()):
        last += 1
    while not lines[last].strip():
        last -= 1
    return range(k, last + 1)


def _function_or_line(lines, k):
    return _function(lines, k) or [k]


def _test_row(lines, k):
    """A rule-table row: the comment and decorator above its ``def``, the def and its body."""
    return list(_comment_and_statement(lines, k - 1)) + [k, k + 1] if lines[k].startswith("def ") else []


def erfcx_rule():
    """Every place adcompile's source and tests name erfcx: all that adding a function touches."""
    return "\n".join([
        _lines_mentioning("adcompile/ir/primitives/numeric/special.py", '"erfcx"', _comment_and_statement),
        _lines_mentioning("adcompile/runtime/kernels/special_functions.py", "erfcx", _function_or_line),
        _lines_mentioning("adcompile/runtime/kernels/special_functions_numba.py", "erfcx", _function_or_line),
        _lines_mentioning("tests/primitives/test_rules.py", "def sp_erfcx", _test_row),
    ])


def api():
    import adcompile
    parts = []
    for name in adcompile.__all__:
        obj = getattr(adcompile, name)
        try:
            signature = str(inspect.signature(obj)) if not inspect.isclass(obj) else ""
        except (TypeError, ValueError):
            signature = ""
        doc = inspect.getdoc(obj) or "(no docstring)"
        parts.append(f"### `adcompile.{name}{signature}`\n\n{_doc_markdown(doc)}")
    return "\n".join(parts)


def _public(module, prefix):
    """The public functions and classes of ``module`` defined in adcompile modules starting with
    ``prefix`` (names it only imports are left out), in ``__all__`` order."""
    names = getattr(module, "__all__", None) or [name for name in vars(module) if not name.startswith("_")]
    return [(name, getattr(module, name)) for name in names
            if (inspect.isfunction(getattr(module, name)) or inspect.isclass(getattr(module, name)))
            and getattr(module, name).__module__.startswith(prefix)]


def api_submodules():
    """The layers and losses of adcompile.nn, nn.functional, nn.utils, init, the optimizers and schedulers."""
    import adcompile
    from adcompile.optim import lr_scheduler
    groups = [("adcompile.nn", _public(adcompile.nn, "adcompile.nn")),
              ("adcompile.nn.functional", _public(adcompile.nn.functional, "adcompile.nn")),
              ("adcompile.nn.utils", _public(adcompile.nn.utils, "adcompile.nn")),
              ("adcompile.modules.init", _public(adcompile.modules.init, "adcompile.modules.init")),
              ("adcompile.tree", _public(adcompile.tree, "adcompile.tree")),
              ("adcompile.optim", [(name, getattr(adcompile.optim, name))
                                   for name in ("SGD", "Adam", "AdamW", "RMSprop", "Adagrad")]),
              ("adcompile.optim.lr_scheduler", [(name, getattr(lr_scheduler, name))
                                                for name in lr_scheduler.__all__[2:]])]
    parts = []
    for prefix, members in groups:
        parts.append(f"### `{prefix}`\n")
        for name, obj in members:
            try:
                signature = str(inspect.signature(obj))
            except (TypeError, ValueError):
                signature = ""
            doc = inspect.getdoc(obj) or "(no docstring)"
            parts.append(f"#### `{prefix}.{name}{signature}`\n\n{_doc_markdown(doc)}")
    return "\n".join(parts)


def _doc_markdown(doc):
    """A docstring as markdown: ``>>>`` examples fenced as pycon, the rest as text."""
    out, block = [], []
    for line in doc.splitlines() + [""]:
        if line.startswith(">>>") or (block and line.strip()):
            block.append(line)
            continue
        if block:
            out.append(_fence("\n".join(block), "pycon"))
            block = []
        out.append(line)
    return "\n".join(out).rstrip() + "\n"


GENERATORS = {"rejected": rejected, "stages": stages, "cli_examples": cli_examples, "cli_help": cli_help,
              "erfcx_rule": erfcx_rule, "api": api, "api_submodules": api_submodules}


def render(text):
    """``text`` with its generated sections regenerated."""
    def replace(match):
        return match.group(1) + GENERATORS[match.group(2)]().rstrip() + "\n" + match.group(4)
    return SECTION.sub(replace, text)


def stale_files():
    """The docs files whose generated sections differ from what running the code gives."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"  # argparse wraps help to the terminal width (a test worker's may differ)
    try:
        return [path for path in sorted(DOCS.glob("*.md"))
                if SECTION.search(path.read_text()) and render(path.read_text()) != path.read_text()]
    finally:
        if previous is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = previous


def main(argv):
    os.environ["COLUMNS"] = "100"
    if "--check" in argv:
        stale = stale_files()
        for path in stale:
            print(f"out of date: {path.relative_to(ROOT)} (run python docs/generate.py)")
        return 1 if stale else 0
    for path in sorted(DOCS.glob("*.md")):
        text = path.read_text()
        new = render(text)
        if new != text:
            path.write_text(new)
            print(f"updated {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
