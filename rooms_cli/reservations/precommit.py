"""The git commit guard: the paths a commit (or a range of commits) changes, as project paths, checked
against other agents' reservations.

`rooms hook pre-commit` runs it; `rooms hook pre-commit --install` writes the hooks that run it:
`pre-commit` (every `git commit`) and `pre-merge-commit` (a merge that commits by itself, git ≥ 2.24).
No hook runs for `git cherry-pick`, `git rebase`, `git am`, a fast-forward merge, or a commit made with
`--no-verify`: CI checks what hooks cannot see with `rooms files check --staged` or `--range A..B`
(docs/reservations.md).

File names are read as bytes (`-z`): git can hold any name, UTF-8 or not (`notes-\\xff.txt`); a name
that is not UTF-8 keeps its bytes escaped (surrogateescape), so it is checked like any other.
"""

from __future__ import annotations

import os
from pathlib import Path

from rooms_cli.core.errors import InvalidInput
from rooms_cli.store import atomic, files
from rooms_cli.store.paths import Project
from rooms_cli.store.sync.engine import Git

HOOKS = ("pre-commit", "pre-merge-commit")
HOOK = """#!/bin/sh
# rooms: refuse a commit whose paths another agent has reserved (rooms files list)
exec rooms hook pre-commit
"""


def _git(cwd: Path) -> Git:
    return Git(cwd, purpose="rooms hook pre-commit")  # store/sync runs git, this guard included


def _top(cwd: Path | None) -> Path:
    return Path(_git(Path(cwd or os.getcwd())).out("rev-parse", "--show-toplevel")).resolve()


def _project_paths(project: Project, top: Path, listing: bytes) -> list[str]:
    """The NUL-separated names git printed (relative to `top`), relative to the project root; those
    outside the project are left out."""
    root = Path(project.root).resolve()
    paths = []
    for name in filter(None, listing.decode("utf-8", "surrogateescape").split("\0")):
        full = top / name
        try:
            paths.append(full.relative_to(root).as_posix())
        except ValueError:
            continue
    return paths


def staged_paths(project: Project, cwd: Path | None = None) -> list[str]:
    """The paths staged for commit (added, changed, renamed, deleted), relative to the project root;
    those outside the project are left out."""
    top = _top(cwd)
    return _project_paths(project, top, _git(top).run("diff", "--cached", "--name-only", "-z", "--no-renames").stdout)


def range_paths(project: Project, revisions: str, cwd: Path | None = None) -> list[str]:
    """The paths the commits of `revisions` (`A..B`, as `git diff` reads it) change, relative to the
    project root: what CI checks after a push, for the commits no hook saw."""
    if not revisions.strip() or revisions.startswith("-"):
        raise InvalidInput(f"--range {revisions!r} is not a range of commits; give it as A..B (e.g. origin/main..HEAD)")
    top = _top(cwd)
    listing = _git(top).run("diff", "--name-only", "-z", "--no-renames", revisions, "--").stdout
    return _project_paths(project, top, listing)


def install_hook(cwd: Path | None = None) -> list[Path]:
    """Write the `pre-commit` and `pre-merge-commit` hooks of the repository at `cwd` (its hooks
    directory, core.hooksPath honoured); the paths written.

    An existing hook that is not ours is left alone (InvalidInput naming it), and nothing is written."""
    here = Path(cwd or os.getcwd())
    hooks = Path(_git(here).out("rev-parse", "--git-path", "hooks"))
    hooks = hooks if hooks.is_absolute() else (here / hooks)
    paths = [hooks / name for name in HOOKS]
    for path in paths:
        if path.exists() and b"rooms hook pre-commit" not in files.read_bytes(path):
            raise InvalidInput(f"{path} already exists and is not rooms'; add the line `rooms hook pre-commit || exit 1` to it")
    for path in paths:
        atomic.write_text(path, HOOK, mode=0o755)
    return paths
