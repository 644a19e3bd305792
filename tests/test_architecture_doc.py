"""docs/architecture.md is exact: its worked examples run, and every store function and test it names exists.

The document's ```python blocks are of two sorts. One preceded by `<!-- edit: <file> … -->` is an edit
to the package: `new` (a new module), `at the end` (appended) or `after "<a line of the file>"`
(inserted after the one line holding that text). The test applies every edit to a copy of
rooms_cli, then runs each other block, in order, in its own interpreter, in a fresh project, with the
copy first on the path — so "add a log" runs the code a newcomer would write, in the files named.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO, rooms_env

DOC = REPO / "docs" / "architecture.md"
BLOCK = re.compile(r"(?:<!-- edit: (?P<edit>[^>]*?) -->\n)?```python\n(?P<code>.*?)```", re.S)
EDIT = re.compile(r'(?P<file>\S+) (?:(?P<new>new)|(?P<end>at the end)|after "(?P<after>.*)")$')


def _blocks() -> list[tuple[str | None, str]]:
    return [(m["edit"], m["code"]) for m in BLOCK.finditer(DOC.read_text("utf-8"))]


def _apply(edit: str, code: str, root: Path) -> None:
    found = EDIT.match(edit)
    assert found, f"docs/architecture.md: cannot read the edit {edit!r}"
    target = root / found["file"]
    if found["new"]:
        assert not target.exists(), f"{found['file']} exists already"
        target.write_text(code, "utf-8")
    elif found["end"]:
        target.write_text(target.read_text("utf-8").rstrip("\n") + "\n\n\n" + code, "utf-8")
    else:
        lines = target.read_text("utf-8").splitlines(keepends=True)
        at = [i for i, line in enumerate(lines) if found["after"] in line]
        assert len(at) == 1, f"{found['file']}: {len(at)} lines hold {found['after']!r} (the edit needs one)"
        lines.insert(at[0] + 1, code)
        target.write_text("".join(lines), "utf-8")


def test_the_worked_examples_run_as_written(tmp_path):
    copy = tmp_path / "src"
    shutil.copytree(REPO / "rooms_cli", copy / "rooms_cli", ignore=shutil.ignore_patterns("__pycache__"))
    blocks = _blocks()
    for edit, code in blocks:
        if edit:
            _apply(edit, code, copy)
    project = tmp_path / "project"
    project.mkdir()
    env = rooms_env({"PYTHONPATH": str(copy), "NO_COLOR": "1", "COLUMNS": "120"})
    for name in ("ROOMS_DIR", "ROOMS_AGENT", "ROOMS_ROOM", "ROOMS_NOW"):
        env.pop(name, None)
    subprocess.run([sys.executable, "-m", "rooms_cli", "init"], cwd=project, env=env, capture_output=True, check=True)
    runs = [code for edit, code in blocks if not edit]
    assert len(runs) == 2  # add an operation, add a log
    for code in runs:
        proc = subprocess.run([sys.executable, "-c", code], cwd=project, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"--- block ---\n{code}--- stdout ---\n{proc.stdout[-3000:]}--- stderr ---\n{proc.stderr[-3000:]}"


def _defined(path: Path) -> set[str]:
    """The names a module defines at its top: functions, classes, constants."""
    names = set()
    for node in ast.parse(path.read_text("utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def test_every_store_function_the_document_names_exists():
    store = REPO / "rooms_cli" / "store"
    named = [(module, name) for module, name in re.findall(r"`(\w+)\.(\w+)`", DOC.read_text("utf-8"))
             if (store / f"{module}.py").exists() and name != "py"]
    missing = [f"store/{module}.py {name}" for module, name in named if name not in _defined(store / f"{module}.py")]
    assert len(named) >= 30 and missing == []


def test_every_architecture_test_the_document_names_exists():
    tests = {node.name for node in ast.parse((REPO / "tests" / "test_architecture.py").read_text("utf-8")).body
             if isinstance(node, ast.FunctionDef)}
    named = set(re.findall(r"`(test_\w+)`", DOC.read_text("utf-8")))
    assert named and named - tests == set()
