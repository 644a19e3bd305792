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


_BUILT: dict[tuple[str, tuple[str, ...]], str] = {}  # (.rooms/, segments) -> the checked path (Project.path)
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
    """A project: its directory and the `.rooms/` directory in it, as absolute paths.

    Paths in the store are strings (os.path), not pathlib.Path: importing pathlib costs every process
    ~3.5 ms (it brings urllib.parse and ipaddress), a tenth of a claim, and the commands agents run in
    loops never need it. Code that wants a Path's methods wraps one: `Path(layout.task_file(…))`."""

    root: str  # the project directory (holds .rooms.yaml)
    dir: str  # the .rooms directory

    def path(self, *segments: str) -> str:
        """A path under .rooms/ made of validated segments; refuses anything that would escape it.

        The segments' check and the path built from them are kept per process (_BUILT: both depend on
        the strings alone; a session builds the same few paths on every call); the symlink check is
        made every time, since a git pull may plant one between two calls (once per folder within
        `one_operation`)."""
        target = known.memo(_BUILT, (self.dir, segments), _built, cap=8192)
        checked = _CHECKED.get(get_ident()) if _CHECKED else None
        if checked is not None and target in checked:  # the whole path, checked in this operation
            return target
        if _links_below(self.dir, segments, checked):  # only a symlink among the segments can lead out
            base = os.path.realpath(self.dir)
            resolved = os.path.realpath(target)
            if resolved != base and not resolved.startswith(base + os.sep):
                raise InvalidInput(f"{'/'.join(segments)} resolves outside {self.dir} (a symlink?); refusing to use it")
        return target

    def relative(self, path: str | os.PathLike[str]) -> str:
        """`path` relative to the project root, for messages and JSON (as given when it lies outside)."""
        text = os.fspath(path)
        if text.startswith(self.root + os.sep):
            return text[len(self.root) + 1:]
        return text


def _built(key: tuple[str, tuple[str, ...]]) -> str:
    """The path of (.rooms/, segments), each segment checked to be a plain name (Project.path)."""
    base, segments = key
    for seg in segments:
        if not isinstance(seg, str) or not _SEGMENT_RE.fullmatch(seg) or ".." in seg:
            raise InvalidInput(
                f"invalid name {seg!r}: use lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
            )
    return os.path.join(base, *segments)


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


def _absolute(path: str | os.PathLike[str]) -> str:
    """`path` made absolute against the working directory as Path.absolute makes it: `.` and empty
    parts dropped, `..` kept (a symlink's `..` is not its lexical parent)."""
    text = os.fspath(path)
    joined = text if os.path.isabs(text) else os.path.join(os.getcwd(), text)
    return os.sep + os.sep.join(part for part in joined.split(os.sep) if part not in ("", "."))


def _as_project(candidate: str | os.PathLike[str]) -> Project | None:
    candidate = _absolute(candidate)
    if os.path.basename(candidate) == ROOMS and os.path.isdir(candidate):
        return Project(root=os.path.dirname(candidate), dir=candidate)
    inner = os.path.join(candidate, ROOMS)
    if os.path.isdir(inner):
        return Project(root=candidate, dir=inner)
    return None


def _upwards(start: str) -> list[str]:
    """`start` (absolute) and each directory above it, up to `/`."""
    chain = [start]
    while (parent := os.path.dirname(chain[-1])) != chain[-1]:
        chain.append(parent)
    return chain


def find_project(start: str | os.PathLike[str] | None = None, explicit: str | os.PathLike[str] | None = None) -> Project | None:
    """Locate the project, or None when there is none."""
    given = explicit or os.environ.get("ROOMS_DIR")
    if given:
        return _as_project(given)
    for candidate in _upwards(_absolute(start if start is not None else os.getcwd())):
        found = _as_project(candidate)
        if found:
            return found
    return None


def enclosing_project(target: str | os.PathLike[str]) -> Project | None:
    """The project whose `.rooms/` a directory already lies under (its own `.rooms/` aside), or None."""
    here = _absolute(target)
    if os.path.basename(here) == ROOMS:
        here = os.path.dirname(here)
    for candidate in _upwards(here)[1:]:
        found = _as_project(candidate)
        if found:
            return found
    return None


def open_project(explicit: str | os.PathLike[str] | None = None, start: str | os.PathLike[str] | None = None) -> Project:
    """The project to act on, or NotInitialized with the fix in the message."""
    project = find_project(start, explicit)
    if project is None:
        given = explicit or os.environ.get("ROOMS_DIR")
        where = f"at {given}" if given else "here or in any parent directory"
        raise NotInitialized(f"no .rooms/ directory {where}; run `rooms init` first")
    return project


def init_project(target: str | os.PathLike[str]) -> tuple[Project, list[str]]:
    """Create the `.rooms/` skeleton under `target`; return the project and what was created."""
    root = _absolute(target)
    if os.path.basename(root) == ROOMS:
        root = os.path.dirname(root)
    created: list[str] = []
    rooms_dir = os.path.join(root, ROOMS)
    if not os.path.exists(rooms_dir):
        os.makedirs(rooms_dir)
        created.append(ROOMS + "/")
    project = Project(root=root, dir=rooms_dir)
    from rooms_cli.store import atomic

    for name, content in ((".gitattributes", GITATTRIBUTES), (".gitignore", GITIGNORE)):
        p = os.path.join(rooms_dir, name)
        if not os.path.exists(p):
            atomic.write_text(p, content)
            created.append(f"{ROOMS}/{name}")
    for sub in ("agents", "rooms", "chat", "deliberations", "groups", "inbox", "spawns", "roundtables", "memories", "schedule",
                "run"):  # run/: local-only files (git-ignored), such as the tick log the crontab line writes
        d = os.path.join(rooms_dir, sub)
        if not os.path.exists(d):
            os.mkdir(d)
            created.append(f"{ROOMS}/{sub}/")
    return project, created
