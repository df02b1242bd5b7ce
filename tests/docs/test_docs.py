"""The documentation cannot go stale.

* every ```python block of README.md runs alone, as pasted, in a fresh process (no setup from
  another block), and every ```python block of docs/*.md runs (per file, in order, in one
  namespace), in subprocesses with ``NUMBA_DISABLE_JIT=1`` so that compile times stay out of
  it; a block preceded by ``<!-- not run -->`` is skipped;
* every relative link of README.md and docs/*.md points to a file that exists, and a link to a
  heading of a Markdown file to a heading that exists;
* the generated sections of docs/ (error messages, IR listings, command-line output, the API
  reference) equal what running the code gives now (``python docs/generate.py --check``);
* the ``>>>`` examples in the docstrings of the public API run as doctests;
* every public name has a docstring.
"""
import doctest
import importlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import adcompile

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"(<!-- not run -->\s*\n)?```python\n(.*?)```", re.DOTALL)
DOC_PAGES = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))
DOC_FILES = ["README.md"] + DOC_PAGES


def code_blocks(name):
    text = (ROOT / name).read_text()
    return [match.group(2) for match in FENCE.finditer(text) if not match.group(1)]


RUNNER = """
import sys, traceback
for name, program in PROGRAMS:
    try:
        exec(compile(program, name, "exec"), {"__name__": "__docs__"})
    except BaseException:
        traceback.print_exc()
        print(f"FAILED: {name}", file=sys.stderr)
        sys.exit(1)
print("ran", len(PROGRAMS), "files")
"""


def test_code_blocks_of_the_docs_run(tmp_path):
    programs = []
    for name in DOC_PAGES:
        blocks = code_blocks(name)
        if blocks:
            # the blocks are written to a file so that adcompile can read their source
            path = tmp_path / (re.sub(r"\W", "_", name) + ".py")
            path.write_text("\n\n".join(blocks))
            programs.append((str(path), path.read_text()))
    assert len(programs) >= 3, programs
    script = tmp_path / "run_docs.py"
    script.write_text(f"PROGRAMS = {programs!r}\n" + RUNNER)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    assert f"ran {len(programs)} files" in result.stdout


README_BLOCKS = code_blocks("README.md")


def run_alone(program, tmp_path):
    """Run ``program`` as a user who pasted it into a file runs it: a new process, nothing else."""
    path = tmp_path / "pasted.py"
    path.write_text(program)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=300,
                            cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-4000:]
    return result.stdout


def test_the_readme_has_examples():
    assert len(README_BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(README_BLOCKS)))
def test_each_readme_example_runs_alone_as_pasted(index, tmp_path):
    run_alone(README_BLOCKS[index], tmp_path)


def test_the_readmes_first_example_prints_the_generated_gradient(tmp_path):
    assert "def loss_grad(" in run_alone(README_BLOCKS[0], tmp_path)


LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def heading_anchors(path):
    """The anchors of a Markdown file's headings, as GitHub and mkdocs make them."""
    anchors = set()
    for line in path.read_text().splitlines():
        heading = re.match(r"#+\s+(.*)", line)
        if heading:
            words = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            anchors.add(words.replace(" ", "-"))
    return anchors


def broken_links(name):
    """The relative links of ``name`` (a Markdown file of the repository) that lead nowhere."""
    source = ROOT / name
    text = re.sub(r"```.*?```", "", source.read_text(), flags=re.DOTALL)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http:, https:, mailto:
        file_part, _, anchor = target.partition("#")
        destination = (source.parent / file_part).resolve() if file_part else source
        if not destination.exists():
            broken.append(target)
        elif anchor and destination.suffix == ".md" and anchor not in heading_anchors(destination):
            broken.append(target)
    return broken


@pytest.mark.parametrize("name", DOC_FILES)
def test_every_link_points_to_an_existing_file_and_heading(name):
    assert not broken_links(name)


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "page.md").write_text("# Page\n\n## A heading\n")
    (tmp_path / "README.md").write_text(
        "[ok](docs/page.md) [ok](docs/page.md#a-heading) [web](https://example.org)\n"
        "[gone](docs/gone.md) [no heading](docs/page.md#no-such-heading)\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert broken_links("README.md") == ["docs/gone.md", "docs/page.md#no-such-heading"]


def test_the_generated_sections_of_the_docs_are_up_to_date(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "docs"))
    generate = importlib.import_module("generate")
    stale = generate.stale_files()
    assert not stale, f"run python docs/generate.py: {stale}"


DOCTEST_MODULES = ["adcompile.inspection.source", "adcompile.inspection.ir_stages", "adcompile.api.compiled", "adcompile.api.derived", "adcompile.derivatives.forward",
                   "adcompile.derivatives.pullback", "adcompile.derivatives.vmapping",
                   "adcompile.checks.gradcheck", "adcompile.backend.cache_folder", "adcompile.custom.function", "adcompile.custom.stop_gradient", "adcompile.custom.rules", "adcompile.modules.module",
                   "adcompile.modules.parameter", "adcompile.training.loops", "adcompile.nn.linear", "adcompile.nn.container",
                   "adcompile.nn.loss_modules", "adcompile.nn.activation", "adcompile.nn.dropout",
                   "adcompile.nn.embedding", "adcompile.nn.normalization", "adcompile.nn.conv", "adcompile.nn.pooling",
                   "adcompile.nn.recurrent", "adcompile.nn.rnn", "adcompile.nn.functional.basic",
                   "adcompile.nn.functional.losses", "adcompile.nn.functional.activation",
                   "adcompile.nn.functional.normalization", "adcompile.nn.functional.conv", "adcompile.modules.init", "adcompile.optim.sgd", "adcompile.optim.adam",
                   "adcompile.optim.rmsprop", "adcompile.optim.adagrad", "adcompile.optim.lr_scheduler.epoch_schedulers",
                   "adcompile.optim.lr_scheduler.factor_schedulers", "adcompile.optim.lr_scheduler.one_cycle",
                   "adcompile.optim.lr_scheduler.plateau", "adcompile.optim.lr_scheduler.sequential_lr", "adcompile.nn.utils", "adcompile.training.fitting",
                   "adcompile.training.history", "adcompile.frontend.checkpointed"]


@pytest.mark.parametrize("module_name", DOCTEST_MODULES)
def test_docstring_examples_run(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
    assert result.attempted > 0, f"{module_name} has no >>> examples"


def public_objects(module, prefix):
    """``{dotted name: object}`` of the public functions and classes of ``module`` defined in
    adcompile modules starting with ``prefix`` (so names it merely imports are left out)."""
    names = getattr(module, "__all__", None) or [name for name in vars(module) if not name.startswith("_")]
    found = {}
    for name in names:
        obj = getattr(module, name)
        if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__.startswith(prefix):
            found[f"{module.__name__}.{name}"] = obj
    return found


def test_every_public_function_and_class_has_an_example():
    documented = {f"adcompile.{name}": getattr(adcompile, name) for name in adcompile.__all__
                  if not inspect.ismodule(getattr(adcompile, name)) and name != "AdCompileError"}
    assert len(documented) >= 20
    # every layer and loss of nn, every function of nn.functional and init; the optimizers and
    # schedulers (their base classes Optimizer and LRScheduler, and OptimizerError, are not used directly)
    documented.update(public_objects(adcompile.nn, "adcompile.nn"))
    documented.update(public_objects(adcompile.nn.functional, "adcompile.nn"))
    documented.update(public_objects(adcompile.nn.utils, "adcompile.nn"))
    documented.update(public_objects(adcompile.modules.init, "adcompile.modules.init"))
    optim = [adcompile.optim.SGD, adcompile.optim.Adam, adcompile.optim.AdamW, adcompile.optim.RMSprop,
             adcompile.optim.Adagrad] + [getattr(adcompile.optim.lr_scheduler, name)
                                         for name in adcompile.optim.lr_scheduler.__all__[2:]]
    documented.update({f"{cls.__module__}.{cls.__name__}": cls for cls in optim})
    assert {"adcompile.nn.LSTMCell", "adcompile.nn.functional.conv2d", "adcompile.nn.functional.mse_loss",
            "adcompile.modules.init.kaiming_uniform_"} <= set(documented)
    missing = [name for name, obj in documented.items() if ">>>" not in (obj.__doc__ or "")]
    assert not missing, missing
    # each example runs: the modules holding them are among the doctest modules
    untested = sorted({obj.__module__ for obj in documented.values()} - set(DOCTEST_MODULES))
    assert not untested, untested


def test_every_public_name_has_a_docstring():
    missing = [name for name in adcompile.__all__ if not (getattr(adcompile, name).__doc__ or "").strip()]
    assert not missing
