"""Finding `.rooms/` and building paths inside it.

Discovery: `--dir PATH` (passed in), else `ROOMS_DIR`, else the nearest `.rooms/` from the working
directory upwards, like git. `--dir`/`ROOMS_DIR` may name the `.rooms` directory itself or the
project directory that holds it.

`Project.path(*segments)` is the primitive under `store/layout.py`, which names every file a part
uses (parts call the layout, never `Project.path` directly): each segment must be a valid name
(`[a-z0-9][a-z0-9._-]*`, no `..`), and the result must stay inside `.rooms/` once symlinks are
resolved, so no id can ever escape it.
"""

from __future__ import annotations

import os
import re
import stat
from _thread import get_ident
from pathlib import Path

from rooms_cli.core.errors import InvalidInput, NotInitialized
from rooms_cli.core.records import dataclass  # dataclasses without inspect (records.py)
from rooms_cli.store import known
from rooms_cli.store.names import ROOMS

CONFIG = ".rooms.yaml"
_SEGMENT_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,95}")

# What git needs to merge .rooms/ between clones (docs/git.md). `rooms init` writes these files;
# `rooms doctor` names any line an existing project's files lack.
GITATTRIBUTES_LINES = (
    "*.jsonl merge=union",  # every log is append-only: a union of both clones' new lines is the merge
)
GITIGNORE_LINES = ("*.lock", "*.tmp", ".*.tmp", "run/")  # locks, temporary files, this machine's state
GITATTRIBUTES = "# written by `rooms init`: how git merges .rooms/ (docs/git.md)\n" + "".join(f"{x}\n" for x in GITATTRIBUTES_LINES)
GITIGNORE = "# written by `rooms init`: locks and temporary files stay out of git\n" + "".join(f"{x}\n" for x in GITIGNORE_LINES)


_BUILT: dict[tuple[Path, tuple[str, ...]], Path] = {}  # (.rooms/, segments) -> the checked Path (Project.path)
_CHECKED: dict[int, set[str]] = {}  # thread -> the folders found not to be symlinks in its current operation


class one_operation:
    """`with one_operation():` around one short operation of a long-lived process (a quick MCP tool
    call): inside it, a folder `Project.path` found not to be a symlink is not lstat'ed again by the
    same thread. A claim builds eight paths under the same few folders (~35 lstats, 0.1–0.2 ms); the check is still
    made on every call, since a git pull may plant a symlink between two calls (within one, checking
    the same folder twice closes no gap: the path is used after the check either way). Outside such
    a block (every CLI command, `rooms watch`) each path is checked whole, every time. Kept per thread
    (not in a ContextVar: importing contextvars would cost every command). Operations do not nest (a
    server runs one quick call at a time); one that did would leave the rest of the outer one checking
    every path whole, never less."""

    def __enter__(self) -> None:
        _CHECKED[get_ident()] = set()

    def __exit__(self, *exc: object) -> None:
        _CHECKED.pop(get_ident(), None)


@dataclass(frozen=True)
class Project:
    """A project: its directory and the `.rooms/` directory in it."""

    root: Path  # the project directory (holds .rooms.yaml)
    dir: Path  # the .rooms directory

    def path(self, *segments: str) -> Path:
        """A path under .rooms/ made of validated segments; refuses anything that would escape it.

        The segments' check and the Path built from them are kept per process (_BUILT: both depend on
        the strings alone; a session builds the same few paths on every call); the symlink check is
        made every time, since a git pull may plant one between two calls (once per folder within
        `one_operation`)."""
        target = known.memo(_BUILT, (self.dir, segments), _built, cap=8192)
        checked = _CHECKED.get(get_ident()) if _CHECKED else None
        if checked is not None and str(target) in checked:  # the whole path, checked in this operation
            return target
        if _links_below(str(self.dir), segments, checked):  # only a symlink among the segments can lead out
            base = self.dir.resolve()
            resolved = target.resolve()
            if resolved != base and base not in resolved.parents:
                raise InvalidInput(f"{'/'.join(segments)} resolves outside {self.dir} (a symlink?); refusing to use it")
        return target

    def relative(self, path: Path) -> str:
        """`path` relative to the project root, for messages and JSON."""
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return str(path)


def _built(key: tuple[Path, tuple[str, ...]]) -> Path:
    """The Path of (.rooms/, segments), each segment checked to be a plain name (Project.path)."""
    base, segments = key
    for seg in segments:
        if not isinstance(seg, str) or not _SEGMENT_RE.fullmatch(seg) or ".." in seg:
            raise InvalidInput(
                f"invalid name {seg!r}: use lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
    return base.joinpath(*segments)


def _links_below(base: str, segments: tuple[str, ...], checked: set[str] | None = None) -> bool:
    """Whether any of `segments` under `base` is a symlink. The segments hold no `..`, so without one
    the path resolves to `base` resolved plus the segments, inside it: one lstat per segment instead of
    resolving `.rooms/` and the target from `/` (two realpaths, ~0.4 ms; an MCP send built ten paths).
    A component that cannot be statted is no link, as realpath takes it. `checked`: the paths found no
    links in this operation (`one_operation`), not lstat'ed again, and those found now added."""
    current = base
    for seg in segments:
        current = os.path.join(current, seg)
        if checked is not None and current in checked:
            continue
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return True
        except OSError:
            continue
        if checked is not None:
            checked.add(current)
    return False


def _as_project(candidate: Path) -> Project | None:
    candidate = candidate.absolute()
    if candidate.name == ROOMS and candidate.is_dir():
        return Project(root=candidate.parent, dir=candidate)
    if (candidate / ROOMS).is_dir():
        return Project(root=candidate, dir=candidate / ROOMS)
    return None


def find_project(start: Path | None = None, explicit: str | os.PathLike[str] | None = None) -> Project | None:
    """Locate the project, or None when there is none."""
    given = explicit or os.environ.get("ROOMS_DIR")
    if given:
        return _as_project(Path(given))
    here = (start or Path.cwd()).absolute()
    for candidate in [here, *here.parents]:
        found = _as_project(candidate)
        if found:
            return found
    return None


def enclosing_project(target: Path) -> Project | None:
    """The project whose `.rooms/` a directory already lies under (its own `.rooms/` aside), or None."""
    target = Path(target).absolute()
    if target.name == ROOMS:
        target = target.parent
    for candidate in target.parents:
        found = _as_project(candidate)
        if found:
            return found
    return None


def open_project(explicit: str | os.PathLike[str] | None = None, start: Path | None = None) -> Project:
    """The project to act on, or NotInitialized with the fix in the message."""
    project = find_project(start, explicit)
    if project is None:
        given = explicit or os.environ.get("ROOMS_DIR")
        where = f"at {given}" if given else "here or in any parent directory"
        raise NotInitialized(f"no .rooms/ directory {where}; run `rooms init` first")
    return project


def init_project(target: Path) -> tuple[Project, list[str]]:
    """Create the `.rooms/` skeleton under `target`; return the project and what was created."""
    target = Path(target).absolute()
    if target.name == ROOMS:
        target = target.parent
    created: list[str] = []
    rooms_dir = target / ROOMS
    if not rooms_dir.exists():
        rooms_dir.mkdir(parents=True)
        created.append(ROOMS + "/")
    project = Project(root=target, dir=rooms_dir)
    from rooms_cli.store import atomic

    for name, content in ((".gitattributes", GITATTRIBUTES), (".gitignore", GITIGNORE)):
        p = rooms_dir / name
        if not p.exists():
            atomic.write_text(p, content)
            created.append(f"{ROOMS}/{name}")
    for sub in ("agents", "rooms", "chat", "deliberations", "groups", "inbox", "spawns", "roundtables", "memories", "schedule",
                "run"):  # run/: local-only files (git-ignored), such as the tick log the crontab line writes
        d = rooms_dir / sub
        if not d.exists():
            d.mkdir()
            created.append(f"{ROOMS}/{sub}/")
    return project, created
