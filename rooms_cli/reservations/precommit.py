"""The git pre-commit guard: the staged paths, as project paths, checked against other agents' reservations.

`rooms hook pre-commit` runs it; `rooms hook pre-commit --install` writes the hook that runs it.
"""

from __future__ import annotations

import os
from pathlib import Path

from rooms_cli.core.errors import InvalidInput
from rooms_cli.store import atomic, files
from rooms_cli.store.paths import Project
from rooms_cli.store.sync.engine import Git

HOOK = """#!/bin/sh
# rooms: refuse a commit whose staged paths another agent has reserved (rooms files list)
exec rooms hook pre-commit
"""


def _git(cwd: Path) -> Git:
    return Git(cwd, purpose="rooms hook pre-commit")  # store/sync runs git, this guard included


def staged_paths(project: Project, cwd: Path | None = None) -> list[str]:
    """The paths staged for commit (added, changed, renamed, deleted), relative to the project root;
    those outside the project are left out."""
    here = Path(cwd or os.getcwd())
    top = Path(_git(here).out("rev-parse", "--show-toplevel")).resolve()
    staged = _git(top).run("diff", "--cached", "--name-only", "-z", "--no-renames").stdout
    names = staged.decode("utf-8", "surrogateescape").split("\0")
    root = project.root.resolve()
    paths = []
    for name in filter(None, names):
        full = top / name
        try:
            paths.append(full.relative_to(root).as_posix())
        except ValueError:
            continue
    return paths


def install_hook(cwd: Path | None = None) -> Path:
    """Write the pre-commit hook of the repository at `cwd` (its hooks directory, core.hooksPath honoured).

    An existing hook that is not ours is left alone (InvalidInput naming it)."""
    here = Path(cwd or os.getcwd())
    hooks = Path(_git(here).out("rev-parse", "--git-path", "hooks"))
    hooks = hooks if hooks.is_absolute() else (here / hooks)
    path = hooks / "pre-commit"
    if path.exists() and b"rooms hook pre-commit" not in files.read_bytes(path):
        raise InvalidInput(f"{path} already exists and is not rooms'; add the line `rooms hook pre-commit || exit 1` to it")
    atomic.write_text(path, HOOK, mode=0o755)
    return path
