"""The git commit guard: the paths a commit (or a range of commits) changes, as project paths, checked
against other agents' reservations.

`rooms hook pre-commit` runs it; `rooms hook pre-commit --install` writes the hooks that run it:
`pre-commit` (every `git commit`) and `pre-merge-commit` (a merge that commits by itself, git ≥ 2.24).
No hook runs for `git cherry-pick`, `git rebase`, `git am`, a fast-forward merge, or a commit made with
`--no-verify`: CI checks what hooks cannot see with `rooms files check --staged` or `--range A..B`
(docs/reservations.md).

File names are read as bytes (`-z`): git can hold any name, UTF-8 or not (`notes-\\xff.txt`); a name
that is not UTF-8 is kept with its bytes escaped (os.fsdecode), so it is checked like any other.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from rooms_cli.errors import InvalidInput, RoomsError
from rooms_cli.store import atomic, files
from rooms_cli.store.paths import Project

HOOKS = ("pre-commit", "pre-merge-commit")
HOOK = """#!/bin/sh
# rooms: refuse a commit whose paths another agent has reserved (rooms files list)
exec rooms hook pre-commit
"""


def _git(cwd: Path, *args: str) -> bytes:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=60)
    except FileNotFoundError:
        raise RoomsError("git is not installed (rooms hook pre-commit runs git)") from None
    if proc.returncode != 0:
        message = os.fsdecode(proc.stderr).strip() or str(proc.returncode)
        raise InvalidInput(f"git {' '.join(args)} failed in {cwd}: {message}")
    return proc.stdout


def _top(cwd: Path | None) -> Path:
    here = Path(cwd or os.getcwd())
    return Path(os.fsdecode(_git(here, "rev-parse", "--show-toplevel")).strip()).resolve()


def _project_paths(project: Project, top: Path, listing: bytes) -> list[str]:
    """The NUL-separated names git printed (relative to `top`), relative to the project root; those
    outside the project are left out."""
    root = project.root.resolve()
    paths = []
    for name in filter(None, listing.split(b"\0")):
        full = top / os.fsdecode(name)
        try:
            paths.append(full.relative_to(root).as_posix())
        except ValueError:
            continue
    return paths


def staged_paths(project: Project, cwd: Path | None = None) -> list[str]:
    """The paths staged for commit (added, changed, renamed, deleted), relative to the project root;
    those outside the project are left out."""
    top = _top(cwd)
    return _project_paths(project, top, _git(top, "diff", "--cached", "--name-only", "-z", "--no-renames"))


def range_paths(project: Project, revisions: str, cwd: Path | None = None) -> list[str]:
    """The paths the commits of `revisions` (`A..B`, as `git diff` reads it) change, relative to the
    project root: what CI checks after a push, for the commits no hook saw."""
    if not revisions.strip() or revisions.startswith("-"):
        raise InvalidInput(f"--range {revisions!r} is not a range of commits; give it as A..B (e.g. origin/main..HEAD)")
    top = _top(cwd)
    return _project_paths(project, top, _git(top, "diff", "--name-only", "-z", "--no-renames", revisions, "--"))


def install_hook(cwd: Path | None = None) -> list[Path]:
    """Write the `pre-commit` and `pre-merge-commit` hooks of the repository at `cwd` (its hooks
    directory, core.hooksPath honoured); the paths written.

    An existing hook that is not ours is left alone (InvalidInput naming it), and nothing is written."""
    here = Path(cwd or os.getcwd())
    hooks = Path(os.fsdecode(_git(here, "rev-parse", "--git-path", "hooks")).strip())
    hooks = hooks if hooks.is_absolute() else (here / hooks)
    paths = [hooks / name for name in HOOKS]
    for path in paths:
        if path.exists() and b"rooms hook pre-commit" not in files.read_bytes(path):
            raise InvalidInput(f"{path} already exists and is not rooms'; add the line `rooms hook pre-commit || exit 1` to it")
    for path in paths:
        atomic.write_text(path, HOOK, mode=0o755)
    return paths
