"""`rooms sync`: carry `.rooms/` both ways through a git remote, on a ref of its own (docs/git.md).

State travels on `refs/rooms/state`, commits built with git plumbing and a private index
(`.rooms/run/sync/index-<remote>`); the user's branches, index, HEAD and work tree outside `.rooms/`
are never touched. The ref's tree (format 2):

    format                            "rooms state 2": what tells a state commit from anything else
    log/<fan>/<name>/<chunk>          a JSONL log as append-only chunks: each sync that has new lines
                                      of the log adds one chunk holding just those lines
    file/<fan>/<name>                 any other file (agents, saves, spawn records…), whole

`<name>` is the path under `.rooms/` with `%` and `/` escaped (`rooms%2Fdefault%2F…`) and `<fan>` the
first two hex digits of its SHA-1: a sync rewrites only the few small trees above what it changed,
never a folder holding every task of a board. Format 1 (`log/<path>/<chunk>`, `file/<path>`) is read
and converted by the first sync.

A sync: fetch the remote's ref into `refs/rooms/remote-state/<remote>`; read only what changed since
the commit this clone last synced (`git diff-tree`, which needs no common history); append the remote
lines this clone lacks to its logs (under each log's lock), after checking each against the schema its
reader uses (what fails is quarantined under `.rooms/run/sync/quarantine/`); take or offer whole files,
checked the same way; then push a commit with this clone's new lines as new chunks, compare-and-swap
(`--force-with-lease` on the value fetched). Another clone that pushed first makes the push fail: fetch,
merge and try again after a short random pause, for up to three times ROOMS_SYNC_TIMEOUT.

Incremental: `.rooms/run/sync/<remote>.json` remembers the last synced commit and, per log, a seal
(inode, byte offset and the CRC-32 of the 4 KiB before it: store/known.seal) and the latest stamp
synced. A sync reads the local bytes appended since (when the seal still holds), the remote chunks
added since, and hashes only whole files whose stat changed. A log git rewrote (a pull, a rebase, a
stash), or whose new lines are not newer than what was synced (a merge that repeated lines), is read
whole on both sides and merged as a union: nothing is pushed twice.

Merging: logs are the union of their lines (a line both sides have counts once; readers order and
dedupe records, store/order.py). Whole files: the side that changed since the last sync wins; both
changed and different: the content whose blob id is greater wins on every clone, and the local loser
is kept under `.rooms/run/sync/conflicts/`. A file missing here (a checkout of a branch from before
`rooms init`) is not a deletion: it is neither removed from the remote nor brought back here.

Compaction: a log of more than CHUNKS_MAX chunks is rewritten as one chunk by the sync that adds to it,
and after HISTORY_MAX commits a sync starts the chain again from a commit without parent, holding the
same state: the remote keeps a bounded history (what falls off is garbage for the remote's `git gc`).

`hooks` (Hooks) let the layers above check what arrives and settle what leaves: `check_file` validates
a whole file with its reader; `gate` sees a log's outgoing lines next to the remote's and may append
records before the push (the board withdraws a `--sync` claim that another clone's beat to the remote,
board/arbiter.py). rooms_cli/across/sync.py puts every part's hooks together; every sync runs with them.

Crash safety: local appends happen before the push and the state is saved after it; a sync killed
anywhere re-reads from the old state next time, and lines it already appended or pushed are found on
the other side and not repeated.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from rooms_cli.core.errors import Conflict, RoomsError
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.core.text import count
from rooms_cli.store import atomic, files, known
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

    # (path under .rooms, the log's outgoing lines, the remote's lines of it when asked) -> records to append
    Gate = Callable[[str, list[bytes], Callable[[], list[bytes]]], list[dict[str, Any]]]
    # (path under .rooms, the whole file's bytes) -> what is wrong with it, or None
    CheckFile = Callable[[str, bytes], "str | None"]

STATE_REF = "refs/rooms/state"
FORMAT = b"rooms state 2\n"
CHUNKS_MAX = 16  # a log with more chunks than this is rewritten as one by the next sync that adds to it
HISTORY_MAX = 64  # commits in the chain before a sync starts it again from a commit without parent
STATE_VERSION = 2
CONTENTION = 3  # a sync retries a refused push for this many times ROOMS_SYNC_TIMEOUT
_SKIP_DIRS = {"run"}
_SKIP_SUFFIXES = (".lock", ".tmp")
_ZERO = "0" * 40
_MESSAGE = re.compile(rb"\n\nrooms state 2 #([0-9]{1,9}):")  # a state commit's message: its format and depth


class SyncError(RoomsError):
    """A sync that could not run or finish; nothing local is lost (exit 1)."""

    code = "sync_failed"


class SyncRejected(Conflict):
    """Other clones kept pushing first until the time ran out (exit 3)."""

    code = "sync_rejected"


@dataclass
class Hooks:
    """What the layers above add to a sync (rooms_cli/across/sync.py): see the module docstring."""

    gate: Gate | None = None
    check_file: CheckFile | None = None


@dataclass
class Syncing:
    """How a `--sync` command syncs: the remote, and the hooks of every part (rooms_cli/across/sync.py
    makes it); what a part that claims through the remote is given, so that it needs no part above it."""

    remote: str
    hooks: Hooks

    def sync(self, project: Project) -> SyncResult:
        return sync(project, self.remote, hooks=self.hooks)


@dataclass
class SyncResult:
    """What one sync did."""

    remote: str
    commit: str | None = None
    pushed: bool = False
    received: int = 0  # log lines appended here from the remote
    sent: int = 0  # log lines pushed to the remote
    files_in: list[str] = field(default_factory=list)
    files_out: list[str] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    quarantined: list[dict[str, Any]] = field(default_factory=list)
    compacted: list[str] = field(default_factory=list)  # logs rewritten as one chunk
    new_root: bool = False  # the pushed commit starts the chain again (compaction, conversion)
    coalesced: bool = False  # another sync of this clone that started after this one was asked did the work
    attempts: int = 0
    seconds: float = 0.0

    def reset(self) -> None:
        """Forget what a refused attempt counted (what it appended locally stays, and counts once)."""
        self.received = self.sent = 0
        self.files_in, self.files_out, self.conflicts, self.quarantined, self.compacted = [], [], [], [], []
        self.new_root = False

    def to_json(self) -> dict[str, Any]:
        return {"attempts": self.attempts, "coalesced": self.coalesced, "commit": self.commit,
                "compacted": self.compacted, "conflicts": self.conflicts, "files_in": sorted(set(self.files_in)),
                "files_out": sorted(set(self.files_out)), "new_root": self.new_root, "pushed": self.pushed,
                "quarantined": self.quarantined, "received": self.received, "remote": self.remote,
                "seconds": round(self.seconds, 3), "sent": self.sent}


# --- git ------------------------------------------------------------------------------------------------


class Git:
    """The one place that runs git (for sync, and for the reservations' pre-commit guard): in the given
    directory, never prompting. `purpose` names the command that needs git, for the error when it is missing."""

    def __init__(self, cwd: str | os.PathLike[str], index: str | os.PathLike[str] | None = None, purpose: str = "rooms sync"):
        self.cwd = Path(cwd)
        self.purpose = purpose
        self.env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        self.env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        if index is not None:
            self.env["GIT_INDEX_FILE"] = str(index)
        self.timeout = sync_timeout()

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        try:
            proc = subprocess.run(["git", *args], cwd=self.cwd, input=input, capture_output=True, env=self.env,
                                  timeout=self.timeout)
        except FileNotFoundError:
            raise SyncError(f"git is not installed (or not on PATH): {self.purpose} needs it", code="no_git") from None
        except subprocess.TimeoutExpired:
            raise SyncError(f"git {args[0]} took longer than {self.timeout:g}s (ROOMS_SYNC_TIMEOUT); nothing was lost, "
                            f"run rooms sync again", code="remote_unreachable") from None
        if check and proc.returncode != 0:
            said = proc.stderr.decode("utf-8", "replace")
            if any(s in said for s in ("No space left on device", "Out of diskspace", "Disk quota exceeded")):
                # git wrote into the repository's object store: name it as every other full-disk error does
                from rooms_cli.core.errors import storage_error

                where = re.search(r"'([^']+)'", said)
                raise storage_error(where.group(1) if where else self.cwd / ".git",
                                    OSError(errno.EDQUOT if "quota" in said else errno.ENOSPC, "no space"))
            raise SyncError(f"git {' '.join(args[:2])} failed: {git_reason(proc.stderr)}", code="git_failed")
        return proc

    def out(self, *args: str, input: bytes | None = None) -> str:
        stdout: bytes = self.run(*args, input=input).stdout
        return stdout.decode("utf-8", "replace").strip()


def sync_timeout() -> float:
    """ROOMS_SYNC_TIMEOUT in seconds (default 60): the longest one git command, or a sync's retries, may take."""
    try:
        value = float(os.environ.get("ROOMS_SYNC_TIMEOUT", "60"))
    except ValueError:
        value = 60.0
    return value if value > 0 else 60.0


# git's advice lines: they say nothing about this failure
_BOILERPLATE = ("Could not read from remote repository", "Please make sure you have the correct access rights",
                "and the repository exists")


def git_reason(data: bytes) -> str:
    """git's own reason for a failure, in one line: its `fatal:`/`error:`/`remote:` lines with their
    continuation lines (`unable to connect to 127.0.0.1:` is followed by `…errno=Connection refused`),
    without the advice every failure repeats."""
    items: list[str] = []
    for raw in data.decode("utf-8", "replace").splitlines():
        line = raw.strip()
        if not line or line.startswith(_BOILERPLATE) or line.startswith("hint:"):
            continue
        for prefix in ("fatal:", "error:", "remote:", "warning:"):
            if line.startswith(prefix):
                line = line[len(prefix):].strip()
                if line and line not in items and prefix != "warning:":
                    items.append(line)
                break
        else:
            if items:
                items[-1] = f"{items[-1].rstrip(':').rstrip()}: {line}" if items[-1].endswith(":") else f"{items[-1]} ({line})"
            else:
                items.append(line)
    text = "; ".join(items) or "no output"
    return text if len(text) <= 400 else text[:399] + "…"


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints), without running git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


FORMAT_BLOB = blob_id(FORMAT)


# --- paths on the ref ------------------------------------------------------------------------------------


def _fan(rel: str) -> str:
    return hashlib.sha1(rel.encode("utf-8", "surrogateescape")).hexdigest()[:2]


def _escape(rel: str) -> str:
    return rel.replace("%", "%25").replace("/", "%2F")


_ESCAPED = re.compile(r"%(25|2F)")


def _unescape(name: str) -> str:
    return _ESCAPED.sub(lambda m: "%" if m.group(1) == "25" else "/", name)


def log_dir(rel: str) -> str:
    """Where the chunks of the log at `rel` (a path under .rooms) live on the ref."""
    return f"log/{_fan(rel)}/{_escape(rel)}"


def file_path(rel: str) -> str:
    return f"file/{_fan(rel)}/{_escape(rel)}"


_CHUNK = re.compile(r"[0-9]{13}-[0-9a-f]{8}")


def travels(rel: str) -> bool:
    """Whether `rel` (a path under .rooms) is one sync carries: relative, no `..` or empty part, not
    under run/, not a lock or temporary file, no control characters."""
    parts = rel.split("/")
    return (bool(rel) and not rel.startswith("/") and all(p and p not in (".", "..") for p in parts)
            and parts[0] not in _SKIP_DIRS and not rel.endswith(_SKIP_SUFFIXES)
            and not any(ord(c) < 32 or c == "\x7f" for c in rel))


def _parse_entry(path: str, version: int) -> tuple[str, str, str | None] | None:
    """(`log` or `file`, the path under .rooms, the chunk name of a log) for an entry of a state tree
    of that format version; None for anything else (what sync never takes in, and drops)."""
    kind, _, rest = path.partition("/")
    if version == 1:
        if kind == "log":
            rel, _, chunk = rest.rpartition("/")
        elif kind == "file":
            rel, chunk = rest, None
        else:
            return None
    else:
        fan, _, rest = rest.partition("/")
        if kind == "log":
            name, _, chunk = rest.partition("/")
            if not _CHUNK.fullmatch(chunk):
                return None
        elif kind == "file" and "/" not in rest:
            name, chunk = rest, None
        else:
            return None
        rel = _unescape(name)
        if fan != _fan(rel) or _escape(rel) != name:
            return None
    if not travels(rel) or (kind == "log") != rel.endswith(".jsonl"):
        return None
    return kind, rel, chunk


# --- local files ------------------------------------------------------------------------------------------


def _local_files(project: Project) -> dict[str, os.stat_result]:
    """Every file under .rooms/ that travels (not run/, locks or temporary files), by path under .rooms."""
    found: dict[str, os.stat_result] = {}
    base = str(project.dir)
    for folder, dirs, names in os.walk(base):
        rel_dir = os.path.relpath(folder, base)
        if rel_dir == ".":
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
            rel_dir = ""
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if not travels(rel):
                continue
            st = os.lstat(os.path.join(folder, name))
            if _is_regular(st):
                found[rel] = st
    return found


def _inside(project: Project, rel: str) -> str:
    """The file `rel` (a path under .rooms that `travels`) in this clone; refused when a symlink among
    its folders leads out of .rooms/ (sync writes there what another clone sent)."""
    target = os.path.join(project.dir, rel)
    base = os.path.realpath(project.dir)
    folder = os.path.realpath(os.path.dirname(target))
    if folder != base and not folder.startswith(base + os.sep):
        raise SyncError(f".rooms/{rel} resolves outside {project.dir} (a symlink?); rooms sync will not write there",
                        code="invalid_input")
    return target


def _is_regular(st: os.stat_result) -> bool:
    import stat as stat_module

    return stat_module.S_ISREG(st.st_mode)


def _lines(data: bytes) -> list[bytes]:
    """The whole, non-blank lines of `data`, each with its newline (an unfinished last line is left out)."""
    return [line for line in data.splitlines(keepends=True) if line.endswith(b"\n") and line.strip()]


def _stat_key(st: os.stat_result) -> list[int]:
    return [st.st_ino, st.st_size, st.st_mtime_ns]


_HLC = re.compile(rb'"hlc": "([^"\\]{1,64})"')


def _stamp(line: bytes) -> str:
    found = _HLC.search(line)
    return found.group(1).decode("ascii", "replace") if found else ""


# --- state ------------------------------------------------------------------------------------------------


def _state_path(project: Project, remote: str) -> str:
    return project.path("run", "sync", f"{_safe(remote)}.json")


def _safe(remote: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in remote.lower()) or "remote"


def _load_state(path: str) -> dict[str, Any]:
    try:
        data = json.loads(files.read_bytes(path))
    except (OSError, ValueError):
        return {"commit": None, "files": {}}
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return {"commit": None, "files": {}}
    return data


def _generation(path: str) -> int:
    value = _load_state(path).get("generation", 0)
    return value if isinstance(value, int) else 0


def last_synced(project: Project, remote: str) -> dict[str, Any] | None:
    """When this clone last synced with `remote` and at which commit, or None (never)."""
    state = _load_state(_state_path(project, remote))
    return {"commit": state["commit"], "at": state.get("at")} if state.get("commit") else None


def synced_remotes(project: Project) -> list[str]:
    """The remotes (by their state file's name) this clone has synced with."""
    folder = project.path("run", "sync")
    return sorted(name[:-5] for name in files.names(folder) if name.endswith(".json"))


def _lock_wait(timeout: float) -> float:
    """How long a sync waits for this clone's sync lock: as long as the holder may retry its push, and
    one more git command."""
    return (CONTENTION + 1) * timeout


@contextmanager
def sync_lock(project: Project, remote: str | None) -> Iterator[None]:
    """Hold this clone's sync lock for `remote` (no sync of it runs meanwhile), waiting as a sync does."""
    remote = remote or "origin"
    path = _state_path(project, remote)
    files.make_folder(os.path.dirname(path))
    with locked(path, timeout=_lock_wait(sync_timeout()), what=f"sync with {remote}"):
        yield


def synced_through(project: Project, remote: str | None, path: str, marker: bytes) -> bool:
    """Whether the line of the log at `path` holding `marker` was part of this clone's last sync with
    `remote` (so it is on the remote: pushed then, or found there). Call it holding `sync_lock`."""
    state = _load_state(_state_path(project, remote or "origin"))
    entry = state["files"].get(os.path.relpath(path, project.dir))

    seal = entry.get("seal") if isinstance(entry, dict) else None
    if not isinstance(seal, list) or len(seal) != 3 or not isinstance(seal[1], int):
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        return known.seal_fd(fd, seal[1]) == seal and marker in os.pread(fd, seal[1], 0)
    finally:
        os.close(fd)


# --- the sync ---------------------------------------------------------------------------------------------


def sync(project: Project, remote: str | None = None, *, hooks: Hooks | None = None) -> SyncResult:
    """Merge `.rooms/` with `remote`'s `refs/rooms/state` both ways; see the module docstring.

    Syncs of one clone run one at a time (a lock). One that had to wait needs not run at all when a
    sync that started after it was called has finished meanwhile: every line written before the call
    went with that one (`coalesced`)."""
    started = time.monotonic()
    remote = remote or "origin"
    git = _open_repo(project, remote)
    state_path = _state_path(project, remote)
    files.make_folder(os.path.dirname(state_path))
    called_at = _generation(state_path)
    result = SyncResult(remote=remote)
    with locked(state_path, timeout=_lock_wait(git.timeout), what=f"sync with {remote}"):
        state = _load_state(state_path)
        if isinstance(state.get("generation"), int) and state["generation"] >= called_at + 2 and state.get("commit"):
            result.commit, result.coalesced = state["commit"], True
            result.seconds = time.monotonic() - started
            return result
        _clear_stale_locks(git, remote)
        _refuse_stashed_rooms(git)
        # from the lock on (the wait for it is not this sync's): while the remote answers and other clones
        # keep pushing first, this sync has its turn to come; it gives up only after three times the timeout
        deadline = time.monotonic() + CONTENTION * git.timeout
        cut_allowed = state.get("cuts", True) is not False
        refused: tuple[str | None, bool] | None = None  # (what the refused push expected, whether it cut the chain)
        while True:
            result.attempts += 1
            result.reset()
            fetched = _fetch(git, remote)
            if refused is not None and refused == (fetched, True):
                cut_allowed = False  # nobody pushed meanwhile: the remote refuses a commit without parent (no forced updates)
            merge = _Merge(project, git, state, remote, fetched, result, hooks or Hooks(), cut_allowed)
            merge.run()
            if not merge.changes:
                state = merge.new_state(fetched)
                break
            commit = merge.commit()
            if _push(git, remote, commit, fetched):
                result.commit, result.pushed, result.new_root = commit, True, merge.new_root
                state = merge.new_state(commit)
                break
            refused = (fetched, merge.new_root)
            if time.monotonic() >= deadline:
                raise SyncRejected(f"the push to {remote} was refused {result.attempts} times in "
                                   f"{CONTENTION * git.timeout:g}s (other clones kept pushing first); nothing was lost: "
                                   f"run rooms sync again")
            # a short random pause, growing to a quarter of a second: two clones that collided do not
            # collide again in step, and the one that lost is back before the winner's next sync
            pause = min(0.25, 0.01 * 2 ** min(result.attempts, 5))
            time.sleep(min(pause * int.from_bytes(os.urandom(2), "big") / 65535, max(0.0, deadline - time.monotonic())))
        merge.write_quarantine()
        generation = state.get("generation")
        state["generation"] = (generation if isinstance(generation, int) else 0) + 1
        if not cut_allowed:
            state["cuts"] = False
        atomic.write_json(state_path, state)
    result.commit = result.commit or state.get("commit")
    result.seconds = time.monotonic() - started
    return result


def _open_repo(project: Project, remote: str) -> Git:
    git = Git(project.root)
    probe = git.run("rev-parse", "--git-dir", check=False)
    if probe.returncode != 0:
        raise SyncError(f"{project.root} is not in a git repository: rooms sync carries .rooms/ through a git remote "
                        f"(git init, git remote add origin URL)", code="not_a_git_repo")
    if git.run("remote", "get-url", remote, check=False).returncode != 0:
        names = git.out("remote").split()
        known_names = f"this repository has {', '.join(names)}" if names else "this repository has none"
        raise SyncError(f"no git remote named {remote!r} ({known_names}): add it with git remote add {remote} URL, or "
                        f"pass --remote NAME (or sync: {{remote: NAME}} in .rooms.yaml)", code="no_remote")
    git.env["GIT_INDEX_FILE"] = str(project.path("run", "sync", f"index-{_safe(remote)}"))
    # state commits are rooms' own, whoever runs the sync
    git.env.update({"GIT_AUTHOR_NAME": "rooms sync", "GIT_AUTHOR_EMAIL": "rooms@localhost",
                    "GIT_COMMITTER_NAME": "rooms sync", "GIT_COMMITTER_EMAIL": "rooms@localhost"})
    git.git_dir = Path(git.cwd) / probe.stdout.decode("utf-8", "surrogateescape").strip()  # type: ignore[attr-defined]
    return git


def _git_dir(git: Git) -> Path:
    found: Path = getattr(git, "git_dir", None) or Path(git.cwd) / git.out("rev-parse", "--git-dir")
    return found


def _clear_stale_locks(git: Git, remote: str) -> None:
    """Remove git lock files a killed sync left on this clone's private index and tracking ref.

    Only sync uses them, and the caller holds the sync lock: a lock file there belongs to a sync that
    died (or to an orphaned git child of one, whose result no longer matters)."""
    index = Path(git.env["GIT_INDEX_FILE"])
    git_dir = _git_dir(git)
    for stale in (index.with_name(index.name + ".lock"), git_dir / "refs" / "rooms" / "remote-state" / f"{remote}.lock"):
        files.remove(stale)


def _refuse_stashed_rooms(git: Git) -> None:
    """A `git stash` holding changes to .rooms/ could not be popped once sync wrote into those files:
    refuse until it is popped (or dropped), naming it."""
    if not (_git_dir(git) / "logs" / "refs" / "stash").exists():
        return
    proc = git.run("log", "-g", "--diff-merges=first-parent", "--name-only", "--format=%gd", "refs/stash", "--", ".rooms",
                   check=False)
    if proc.returncode != 0:
        return
    listing = [line for line in proc.stdout.decode("utf-8", "replace").splitlines() if line.strip()]
    stashes = [line for line in listing if line.startswith("stash@{")]
    if not stashes:
        return
    held = [line for line in listing if not line.startswith("stash@{")]
    raise SyncError(f"git stash holds changes to .rooms/ ({', '.join(stashes)}: {', '.join(held[:3])}"
                    f"{'…' if len(held) > 3 else ''}); a sync now would write into those files and the stash could not be "
                    f"popped. Run git stash pop first (or git stash drop), then rooms sync; nothing was synced",
                    code="stash_holds_rooms")


def _fetch(git: Git, remote: str) -> str | None:
    """Fetch the remote's state ref; its commit, or None when the remote has none yet."""
    tracking = f"refs/rooms/remote-state/{remote}"
    for _ in range(40):  # a git child of a killed sync may still hold the tracking ref's lock for a moment
        # no auto-gc in the user's repository, no submodules, no forced-update walk: a claim waits on this
        proc = git.run("fetch", "--no-tags", "--no-write-fetch-head", "--quiet", "--no-auto-maintenance",
                       "--no-recurse-submodules", "--no-show-forced-updates", remote, f"+{STATE_REF}:{tracking}",
                       check=False)
        if proc.returncode == 0 or b".lock" not in proc.stderr:
            break
        time.sleep(0.05)
        _clear_stale_locks(git, remote)
    if proc.returncode != 0:
        text = proc.stderr.decode("utf-8", "replace")
        if "couldn't find remote ref" in text or "could not find remote ref" in text:
            git.run("update-ref", "-d", tracking, check=False)
            return None
        raise SyncError(f"cannot reach git remote {remote!r}: {git_reason(proc.stderr)}; nothing was synced, "
                        f"nothing local is lost", code="remote_unreachable")
    return git.out("rev-parse", "--verify", "--quiet", tracking)


def _push(git: Git, remote: str, commit: str, expected: str | None) -> bool:
    """Compare-and-swap the remote ref from `expected` to `commit`; False when another clone got there first."""
    lease = f"--force-with-lease={STATE_REF}:{expected or ''}"
    # --no-verify: the user's pre-push hook is about their branches, not rooms' state
    proc = git.run("push", "--quiet", "--porcelain", "--no-verify", lease, remote, f"{commit}:{STATE_REF}", check=False)
    if proc.returncode == 0:
        return True
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if "[rejected]" in text or "stale info" in text or "non-fast-forward" in text or "fetch first" in text \
            or "failed to update ref" in text or "cannot lock ref" in text or "incorrect old value" in text:
        return False
    raise SyncError(f"cannot push to git remote {remote!r}: {git_reason(proc.stderr or proc.stdout)}; nothing local "
                    f"is lost", code="remote_unreachable")


def _cat_blobs(git: Git, blobs: list[str]) -> dict[str, bytes]:
    """The contents of `blobs`, in one `git cat-file --batch`."""
    wanted = list(dict.fromkeys(blobs))
    if not wanted:
        return {}
    raw = git.run("cat-file", "--batch", input="".join(f"{b}\n" for b in wanted).encode()).stdout
    out: dict[str, bytes] = {}
    pos = 0
    for blob in wanted:
        header_end = raw.index(b"\n", pos)
        header = raw[pos:header_end].split()
        if len(header) < 3 or header[1] != b"blob":
            raise SyncError(f"the remote state names an object git cannot read as a file ({blob}: "
                            f"{b' '.join(header[1:]).decode('utf-8', 'replace') or 'missing'}); nothing was synced",
                            code="git_failed")
        size = int(header[2])
        out[blob] = raw[header_end + 1: header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return out


@dataclass
class _LogMerge:
    """What merging one log did."""

    incoming: list[bytes]  # the remote's lines that a reader takes (new ones, or all when read whole)
    outgoing: list[bytes]  # this clone's lines the remote lacks (with what the gate added)
    missing: int  # remote lines appended here
    rejected: list[tuple[str, bytes]]
    carried: dict[str, list[bytes]]  # chunks to take out of the tree -> their clean lines, which go in the new one
    seal: list[Any] | None  # None: the log was not made here (new, and no line of it passed)
    stat: list[int] | None


@dataclass
class _Remote:
    """What the fetched state holds or changed, by path under .rooms."""

    chunks: dict[str, dict[str, str]] = field(default_factory=dict)  # log -> {chunk: blob} (new ones, or all)
    removed: dict[str, dict[str, str]] = field(default_factory=dict)  # log -> {chunk: blob} gone since (compacted)
    sizes: dict[str, dict[str, int]] = field(default_factory=dict)  # log -> {chunk: bytes}, for logs listed whole
    whole_logs: set[str] = field(default_factory=set)  # logs listed whole in `chunks`
    files: dict[str, str] = field(default_factory=dict)  # file -> blob (changed ones, or all)
    absent: set[str] = field(default_factory=set)  # files the remote no longer has
    drop: list[str] = field(default_factory=list)  # tree entries sync never keeps (foreign, malformed)
    everything: bool = False  # a full listing: what is not here is not on the remote


class _Merge:
    """One attempt: local and remote changes since the last sync, merged; the commit to push."""

    def __init__(self, project: Project, git: Git, state: dict[str, Any], remote: str, fetched: str | None,
                 result: SyncResult, hooks: Hooks, cut_allowed: bool):
        self.project, self.git, self.remote, self.fetched, self.result, self.hooks = project, git, remote, fetched, result, hooks
        self.state = state
        self.known: str | None = state.get("commit") if state.get("version") == STATE_VERSION else None
        self.files: dict[str, dict[str, Any]] = {rel: dict(e) for rel, e in state["files"].items() if isinstance(e, dict)}
        self.index_entries: list[str] = []  # `git update-index --index-info` lines
        self.new_blobs: dict[str, bytes] = {}
        self.changes = False
        self.cut_allowed = cut_allowed
        self.new_root = False  # the commit has no parent
        self.fresh = False  # the tree is built from nothing (conversion, a foreign ref)
        self.depth = 0
        self.quarantine: list[tuple[str, str, bytes]] = []  # (path, reason, what)

    # --- what the remote holds -----------------------------------------------------------------------

    def _shape(self) -> tuple[int | None, int]:
        """(2 or 1 for a state commit of that format, None for anything else — a user's branch pushed
        there; the commit's depth in its chain). A format-2 commit says both in its message; one made by
        other means is known by the `format` blob at its root (whatever else is there is dropped)."""
        assert self.fetched is not None
        said = _MESSAGE.search(self.git.run("cat-file", "commit", self.fetched).stdout)
        if said is not None:
            return 2, int(said.group(1))
        top = self.git.run("ls-tree", "-z", self.fetched).stdout
        names = {}
        for entry in top.split(b"\0"):
            if b"\t" in entry:
                meta, name = entry.split(b"\t", 1)
                names[name] = meta.split()[2].decode()
        if names.get(b"format") == FORMAT_BLOB:
            return 2, int(self.git.out("rev-list", "--count", self.fetched) or 0)
        return (1 if names and set(names) <= {b"log", b"file"} else None), 0

    def _listing(self, version: int, paths: list[str] | None = None) -> _Remote:
        """Every entry of the fetched tree (or under `paths`), sorted into logs (with their chunks' sizes),
        files and what to drop."""
        assert self.fetched is not None
        seen = _Remote(everything=paths is None)
        raw = self.git.run("ls-tree", "-r", "-z", "-l", "--full-tree", self.fetched,
                           *(["--", *paths] if paths else [])).stdout
        for entry in raw.split(b"\0"):
            if not entry:
                continue
            meta, name = entry.split(b"\t", 1)
            path = name.decode("utf-8", "surrogateescape")
            parts = meta.split()
            parsed = self._note(seen, path, parts[2].decode(), parts[1] == b"blob", version)
            if parsed is not None and parsed[2] is not None and parts[3].isdigit():
                seen.sizes.setdefault(parsed[1], {})[parsed[2]] = int(parts[3])
        seen.whole_logs = set(seen.chunks)
        return seen

    def _note(self, seen: _Remote, path: str, blob: str, is_blob: bool, version: int, *,
              removed: bool = False) -> tuple[str, str, str | None] | None:
        """Sort one tree entry (one `removed` since the last sync, or there now) into `seen`."""
        if path == "format":
            return None
        parsed = _parse_entry(path, version) if is_blob else None
        if parsed is None:
            if not removed:
                seen.drop.append(path)
            return None
        kind, rel, chunk = parsed
        if kind == "log" and chunk is not None:
            (seen.removed if removed else seen.chunks).setdefault(rel, {})[chunk] = blob
        elif removed:
            seen.absent.add(rel)
        else:
            seen.files[rel] = blob
        return parsed

    def _since_known(self) -> _Remote | None:
        """What changed on the remote since the commit this clone last synced (None: list everything).
        The two commits need no common history: a chain started again diffs like any other."""
        assert self.fetched is not None
        if not self.known:
            return None
        if self.known == self.fetched:
            return _Remote()
        proc = self.git.run("diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", self.known, self.fetched, check=False)
        if proc.returncode != 0:
            return None  # the commit last synced is gone from this repository (gc): list everything
        seen = _Remote()
        fields = proc.stdout.split(b"\0")
        for meta, name in zip(fields[0::2], fields[1::2], strict=False):
            parts = meta.split()
            if len(parts) < 5:
                continue
            path = name.decode("utf-8", "surrogateescape")
            status = parts[4][:1]
            if status == b"D" or (status == b"M" and path.startswith("log/")):  # a chunk rewritten: gone, and new
                self._note(seen, path, parts[2].decode(), parts[0] != b":040000", 2, removed=True)
            if status != b"D":
                self._note(seen, path, parts[3].decode(), parts[1] != b"040000", 2)
        return seen

    def _remote_view(self) -> _Remote:
        if self.fetched is None:
            if self.known:
                raise self._rewritten("deleted")
            self.fresh = True
            return _Remote(everything=True)
        depth = self.state.get("depth")
        version: int | None
        if self.fetched == self.known and isinstance(depth, int):
            version, self.depth = 2, depth  # what this clone synced last: no need to look
        else:
            version, self.depth = self._shape()
        if version is None:
            if self.state.get("commit"):
                raise self._rewritten("replaced by a commit that is not rooms state (a branch pushed there?)")
            self.fresh = True  # after the recovery: the foreign commit contributes nothing, not even a parent
            return _Remote(everything=True)
        if version == 1:
            self.fresh = True
            return self._listing(1)
        return self._since_known() or self._listing(2)

    def _rewritten(self, how: str) -> SyncError:
        return SyncError(f"{STATE_REF} on {self.remote!r} was {how}; nothing local is lost. To merge everything again from "
                         f"scratch, remove .rooms/run/sync/{_safe(self.remote)}.json and run rooms sync",
                         code="remote_rewritten")

    # --- the merge -----------------------------------------------------------------------------------

    def run(self) -> None:
        remote = self._remote_view()
        local = _local_files(self.project)
        logs = sorted({rel for rel in local if rel.endswith(".jsonl")} | set(remote.chunks) | remote.whole_logs
                      | {rel for rel, e in self.files.items() if e.get("kind") == "log"})
        unsealed = [rel for rel in logs if rel in local and not isinstance((self.files.get(rel) or {}).get("seal"), list)]
        self._list_whole(unsealed, remote)  # never synced here: every chunk of it, in one listing
        contents = _cat_blobs(self.git, [b for chunks in (*remote.chunks.values(), *remote.removed.values())
                                         for b in chunks.values()] + list(remote.files.values()))
        if self.fresh:
            self.git.run("read-tree", "--empty")
            self._add_blob("format", FORMAT)
            self.new_root = True
        else:
            self.git.run("read-tree", self.fetched or "--empty")
            self.new_root = self.cut_allowed and self.depth >= HISTORY_MAX
        for path in remote.drop:
            self._remove(path)
        for rel in logs:
            self._merge_log(rel, local.get(rel), remote, contents)
        others = ({rel for rel in local if not rel.endswith(".jsonl")} | set(remote.files) | remote.absent
                  | {rel for rel, e in self.files.items() if e.get("kind") == "file"})
        for rel in sorted(others):
            self._merge_file(rel, local.get(rel), remote, contents)
        if self.new_root:
            self.changes = True

    def _list_whole(self, logs: list[str], remote: _Remote) -> None:
        """Make `remote` hold every chunk of each of `logs` (one listing of the fetched tree)."""
        wanted = [rel for rel in logs if rel not in remote.whole_logs]
        if not wanted or remote.everything or self.fetched is None or self.fresh:
            remote.whole_logs.update(logs)
            return
        listed = self._listing(2, [log_dir(rel) + "/" for rel in wanted])
        for rel in wanted:
            remote.chunks[rel] = listed.chunks.get(rel, {})
            remote.sizes[rel] = listed.sizes.get(rel, {})
            remote.removed.pop(rel, None)
        remote.whole_logs.update(wanted)

    def _remote_lines(self, rel: str, chunks: dict[str, str],
                      contents: dict[str, bytes]) -> tuple[dict[str, list[bytes]], list[str], list[tuple[str, bytes]]]:
        """The log's lines in each of these chunks that pass its reader's schema; the chunks holding one
        that does not; and those lines, with why."""
        from rooms_cli.store import schema

        kind = log_kind(rel)
        good: dict[str, list[bytes]] = {}
        bad_chunks: list[str] = []
        rejected: list[tuple[str, bytes]] = []
        for chunk in sorted(chunks):
            kept = good[chunk] = []
            for line in contents[chunks[chunk]].splitlines(keepends=True):
                if not line.strip():
                    continue
                problem = _line_problem(line, kind, schema)
                if problem is None:
                    kept.append(line if line.endswith(b"\n") else line + b"\n")
                else:
                    rejected.append((f"a line of chunk {chunk} {problem}", line))
                    if chunk not in bad_chunks:
                        bad_chunks.append(chunk)
        return good, bad_chunks, rejected

    def _reject(self, rel: str, reason: str, what: bytes) -> None:
        self.quarantine.append((rel, reason, what))
        self.result.quarantined.append({"path": rel, "reason": reason})

    def _merge_log(self, rel: str, st: os.stat_result | None, remote: _Remote, contents: dict[str, bytes]) -> None:
        from rooms_cli.store import changes

        entry = self.files.get(rel) or {}
        if st is None and entry.get("kind") == "log":
            # synced before and missing now (a checkout of a branch without it): not a deletion; it is read
            # whole once it is back, and its lines stay on the remote meanwhile (a new tree carries them)
            count = self._count(rel, entry, remote)
            if self.fresh:
                by_chunk, _, rejected = self._remote_lines(rel, remote.chunks.get(rel, {}), contents)
                for reason, line in rejected:
                    self._reject(rel, reason, line)
                carried = list(dict.fromkeys(line for chunk in sorted(by_chunk) for line in by_chunk[chunk]))
                self._add_chunk(rel, carried)
                count = 1 if carried else 0
            self.files[rel] = {"kind": "log", "top": entry.get("top", ""), "chunks": count}
            return
        if st is None and not remote.chunks.get(rel):
            return
        if (st is not None and not remote.chunks.get(rel) and not remote.removed.get(rel)
                and rel not in remote.whole_logs and entry.get("stat") == _stat_key(st)):
            return  # nothing new on either side: not even the log's lock
        path = _inside(self.project, rel)
        files.make_folder(os.path.dirname(path))
        with locked(path):
            try:
                fd: int | None = os.open(path, os.O_RDWR | os.O_APPEND)
            except FileNotFoundError:
                fd = None  # new here: made whole with the remote's lines (_merge_open_log)
            try:
                done = self._merge_open_log(rel, path, fd, entry, remote, contents)
            finally:
                if fd is not None:
                    os.close(fd)
        for reason, line in done.rejected:
            self._reject(rel, reason, line)
        if done.missing:
            changes.note(path)
            self.result.received += done.missing
            self.result.files_in.append(rel)
        self._offer_log(rel, entry, remote, contents, done)

    def _merge_open_log(self, rel: str, path: str, fd: int | None, entry: dict[str, Any], remote: _Remote,
                        contents: dict[str, bytes]) -> _LogMerge:
        """Under the log's lock (`fd` open on it, None when it is new here): append the remote lines it
        lacks, ask the gate, and say what goes out."""
        if fd is None:
            return self._make_log(rel, path, remote, contents)
        from rooms_cli.store import jsonl

        jsonl._refuse_unresolved_merge(fd, path)
        jsonl._repair_torn_tail(fd, path)
        size = os.fstat(fd).st_size
        seal = entry.get("seal")
        sealed = rel not in remote.whole_logs and isinstance(seal, list) and len(seal) == 3 and isinstance(seal[1], int) \
            and known.seal_fd(fd, seal[1]) == seal
        start: int = seal[1] if sealed and isinstance(seal, list) else 0
        ours = _lines(os.pread(fd, size - start, start)) if size > start else []
        if rel not in remote.whole_logs and ((size and not sealed)
                                             or any(_stamp(line) <= entry.get("top", "") for line in ours)):
            # read both sides whole: the seal broke (git rewrote the file), or its new lines are not newer
            # than what was synced (a merge repeated them, or brought a teammate's)
            self._list_whole([rel], remote)
            contents.update(_cat_blobs(self.git, list(remote.chunks[rel].values())))
            start = 0
            ours = _lines(os.pread(fd, size, 0)) if size else []
        by_chunk, bad_chunks, rejected, incoming, gone = self._incoming(rel, remote, contents)
        have = set(ours)
        missing = [line for line in dict.fromkeys(incoming) if line not in have]
        if missing:
            data = memoryview(b"".join(missing))
            while data:
                data = data[os.write(fd, data):]
        arrived = set(incoming) | gone
        outgoing = [line for line in dict.fromkeys(ours) if line not in arrived]
        if outgoing and self.hooks.gate is not None:
            def on_remote() -> list[bytes]:
                return (_lines(os.pread(fd, start, 0)) if start else []) + incoming

            extra = self.hooks.gate(rel, outgoing, on_remote)
            if extra:
                before = os.fstat(fd).st_size
                jsonl.append_many(path, extra, lock=False)
                outgoing += _lines(os.pread(fd, os.fstat(fd).st_size - before, before))
        if missing or outgoing:
            os.fsync(fd)
        after = os.fstat(fd)
        carried = {chunk: by_chunk[chunk] for chunk in bad_chunks}
        if self.fresh:
            carried = by_chunk
        return _LogMerge(incoming=incoming, outgoing=outgoing, missing=len(missing), rejected=rejected, carried=carried,
                         seal=known.seal_fd(fd, after.st_size), stat=_stat_key(after))

    def _incoming(self, rel: str, remote: _Remote, contents: dict[str, bytes]) -> tuple[
            dict[str, list[bytes]], list[str], list[tuple[str, bytes]], list[bytes], set[bytes]]:
        """The log's new chunks on the remote (_remote_lines: good lines by chunk, bad chunks, rejected
        lines); the good lines that are new; the lines of chunks the remote took out since."""
        by_chunk, bad_chunks, rejected = self._remote_lines(rel, remote.chunks.get(rel, {}), contents)
        gone = {line for blob in remote.removed.get(rel, {}).values() for line in _lines(contents[blob])}
        # a chunk that replaced others (compacted there) holds lines this clone had from them: not new
        incoming = [line for chunk in sorted(by_chunk) for line in by_chunk[chunk] if line not in gone]
        return by_chunk, bad_chunks, rejected, incoming, gone

    def _make_log(self, rel: str, path: str, remote: _Remote, contents: dict[str, bytes]) -> _LogMerge:
        """A log new here: made whole with the remote's lines (files.link_whole), so that a sync killed
        meanwhile leaves no empty or half-written log; nothing made when no line passes its checks."""
        by_chunk, bad_chunks, rejected, incoming, _ = self._incoming(rel, remote, contents)
        missing = list(dict.fromkeys(incoming))
        carried = by_chunk if self.fresh else {chunk: by_chunk[chunk] for chunk in bad_chunks}
        seal: list[Any] | None = None
        stat: list[int] | None = None
        if missing:
            fd = files.link_whole(path, b"".join(missing))
            if fd is None:  # only a writer that ignores the log's lock, which sync holds
                raise SyncError(f".rooms/{rel} was made by another process while rooms sync held its lock; nothing was "
                                f"lost: run rooms sync again", code="sync_failed")
            try:
                after = os.fstat(fd)
                seal, stat = known.seal_fd(fd, after.st_size), _stat_key(after)
            finally:
                os.close(fd)
        return _LogMerge(incoming=incoming, outgoing=[], missing=len(missing), rejected=rejected, carried=carried,
                         seal=seal, stat=stat)

    def _offer_log(self, rel: str, entry: dict[str, Any], remote: _Remote, contents: dict[str, bytes],
                   done: _LogMerge) -> None:
        """Put the log's outgoing lines in the tree as one new chunk; with them go the clean lines of a
        chunk that had to go, and — past CHUNKS_MAX chunks — the newest chunks that together are no
        bigger than the one before them (so a big old chunk is rewritten only once as much came after it)."""
        count = self._count(rel, entry, remote)
        merged = dict(done.carried)
        if done.outgoing and count >= CHUNKS_MAX and not self.fresh:
            if rel not in remote.whole_logs:
                self._list_whole([rel], remote)
            suffix = _to_merge(remote.sizes.get(rel, {}))
            missing = [remote.chunks[rel][chunk] for chunk in suffix if remote.chunks[rel][chunk] not in contents]
            contents.update(_cat_blobs(self.git, missing))
            by_chunk, _, _ = self._remote_lines(rel, {c: remote.chunks[rel][c] for c in suffix}, contents)
            merged.update(by_chunk)
            self.result.compacted.append(rel)
        for chunk in () if self.fresh else merged:
            self._remove(f"{log_dir(rel)}/{chunk}")
        lines = list(dict.fromkeys([line for chunk in sorted(merged) for line in merged[chunk]] + done.outgoing))
        if lines:
            self._add_chunk(rel, lines)
        count = count - (0 if self.fresh else len(merged)) + (1 if lines else 0)
        if done.outgoing:
            self.result.sent += len(done.outgoing)
            self.result.files_out.append(rel)
        if done.seal is None:  # not made here: still new to this clone next time
            self.files.pop(rel, None)
            return
        top = max([entry.get("top", ""), *map(_stamp, done.incoming), *map(_stamp, done.outgoing)])
        self.files[rel] = {"kind": "log", "seal": done.seal, "top": top, "chunks": count, "stat": done.stat}

    @staticmethod
    def _count(rel: str, entry: dict[str, Any], remote: _Remote) -> int:
        """How many chunks the log has on the remote as fetched."""
        chunks = remote.chunks.get(rel, {})
        if rel in remote.whole_logs:
            return len(chunks)
        count = entry.get("chunks", 0)
        return max(0, (count if isinstance(count, int) else 0) + len(chunks) - len(remote.removed.get(rel, {})))

    def _add_chunk(self, rel: str, lines: list[bytes]) -> None:
        if not lines:
            return
        chunk = f"{time.time_ns() // 1_000_000:013d}-{os.urandom(4).hex()}"
        self._add_blob(f"{log_dir(rel)}/{chunk}", b"".join(lines))

    def _add_blob(self, path: str, data: bytes) -> None:
        blob = blob_id(data)
        self.new_blobs[blob] = data
        self.index_entries.append(f"100644 {blob}\t{path}")
        self.changes = True

    def _remove(self, path: str) -> None:
        self.index_entries.append(f"0 {_ZERO}\t{path}")
        self.changes = True

    def _merge_file(self, rel: str, st: os.stat_result | None, remote: _Remote, contents: dict[str, bytes]) -> None:
        """Three ways against the blob both sides had at the last sync (`blob`), with what the remote
        holds (`remote`); a file missing here is not a deletion, one missing there goes back."""
        entry = self.files.get(rel) or {}
        base: str | None = entry.get("blob")
        path = _inside(self.project, rel)
        there, data_there = self._there(rel, entry, remote, contents)
        if st is None:
            if base is None and there is not None and data_there is not None:
                self._write_file(path, rel, data_there)  # new there: it arrives
                self.files[rel] = {"kind": "file", "blob": there, "remote": there, "stat": _stat_key(os.lstat(path))}
            elif base is not None:
                # synced before, missing here now: neither removed there nor brought back here
                self.files[rel] = {"kind": "file", "blob": base, "remote": there, "stat": None}
            if self.fresh and there is not None:
                self.index_entries.append(f"100644 {there}\t{file_path(rel)}")
            return
        stat_key = _stat_key(st)
        data_here = None
        if entry.get("stat") == stat_key and base is not None:
            here = base
        else:
            data_here = files.read_bytes(path)
            here = blob_id(data_here)
        if there is None or here == there:
            take = here
        elif here == base:
            take = there
        elif there == base:
            take = here
        else:  # both changed since the last sync (or never synced) and differ: the same choice on every clone
            take = max(here, there)
            if take != here:
                self._keep_loser(rel, data_here if data_here is not None else files.read_bytes(path), here)
            self.result.conflicts.append({"path": rel, "kept": take, "local": here, "remote": there})
        if take != here and data_there is not None:
            self._write_file(path, rel, data_there)
            stat_key = _stat_key(os.lstat(path))
        if take == here and (take != there or self.fresh):
            self._add_blob(file_path(rel), data_here if data_here is not None else files.read_bytes(path))
            self.result.files_out.append(rel)
        elif self.fresh:  # theirs, already in this repository's objects
            self.index_entries.append(f"100644 {there}\t{file_path(rel)}")
        self.files[rel] = {"kind": "file", "blob": take, "remote": take, "stat": stat_key}

    def _there(self, rel: str, entry: dict[str, Any], remote: _Remote,
               contents: dict[str, bytes]) -> tuple[str | None, bytes | None]:
        """The blob the remote holds for the file (None: none, or none a reader takes) and, when it
        changed since the last sync, its bytes, checked."""
        base = entry.get("blob")
        if rel in remote.files:
            there: str | None = remote.files[rel]
        elif rel in remote.absent or remote.everything:
            there = None
        else:
            there = entry.get("remote", base)  # unchanged there since this clone last looked
        data_there = contents.get(there) if there else None
        if there is not None and there != base and data_there is None:
            try:  # a change seen while the file was missing here: read it now
                data_there = _cat_blobs(self.git, [there])[there]
            except SyncError:
                return None, None
        if there is not None and there != base and data_there is not None:
            problem = self._file_problem(rel, data_there)
            if problem is not None:  # what no reader takes never reaches .rooms/; this clone's copy goes back
                self._reject(rel, problem, data_there)
                return None, None
        return there, data_there

    def _file_problem(self, rel: str, data: bytes) -> str | None:
        if b"\0" in data:
            return "holds NUL bytes: not a text file any reader takes"
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return "is not UTF-8 text"
        return self.hooks.check_file(rel, data) if self.hooks.check_file is not None else None

    def _write_file(self, path: str, rel: str, data: bytes) -> None:
        files.make_folder(os.path.dirname(path))
        atomic.write_bytes(path, data)
        self.result.files_in.append(rel)

    def _keep_loser(self, rel: str, data: bytes, blob: str) -> None:
        keep = os.path.join(self.project.path("run", "sync", "conflicts"), f"{rel}.{blob[:12]}")
        files.make_folder(os.path.dirname(keep))
        atomic.write_bytes(keep, data)

    def write_quarantine(self) -> None:
        """Keep what was refused under .rooms/run/sync/quarantine/<remote>.jsonl (one record each) and say so."""
        if not self.quarantine:
            return
        from rooms_cli.core import terminal
        from rooms_cli.store import jsonl
        from rooms_cli.store.clock import now_iso

        path = self.project.path("run", "sync", "quarantine", f"{_safe(self.remote)}.jsonl")
        files.make_folder(os.path.dirname(path))
        jsonl.append_many(path, [{"at": now_iso(), "commit": self.fetched, "path": rel, "reason": reason,
                                  "data": what.decode("utf-8", "replace")} for rel, reason, what in self.quarantine])
        first = self.quarantine[0]
        many = len(self.quarantine) > 1
        terminal.warn(f"rooms sync: {count(len(self.quarantine), 'item')} from {self.remote} {'fail' if many else 'fails'} "
                      f"{'their' if many else 'its'} reader's checks and {'were' if many else 'was'} "
                      f"kept out of .rooms/ (.rooms/run/sync/quarantine/{_safe(self.remote)}.jsonl), e.g. {first[0]}: "
                      f"{first[1]}")

    def commit(self) -> str:
        """Write the new blobs, update the private index, and commit its tree (on the fetched commit, or
        without parent when the chain starts again)."""
        if self.new_blobs:
            tmp = self.project.path("run", "sync", "blobs")
            files.make_folder(tmp)
            names: list[str] = []
            for blob, data in self.new_blobs.items():
                with open(os.path.join(tmp, blob), "wb") as handle:
                    handle.write(data)
                names.append(os.path.join(tmp, blob))


            written = self.git.out("hash-object", "-w", "--no-filters", "--stdin-paths",
                                   input="".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape")).split()
            for name in names:
                os.unlink(name)
            if sorted(written) != sorted(self.new_blobs):
                raise SyncError("git stored different blobs than rooms computed; nothing was pushed", code="git_failed")
        entries = "".join(f"{e}\0" for e in self.index_entries).encode("utf-8", "surrogateescape")
        self.git.run("update-index", "-z", "--index-info", input=entries)
        tree = self.git.out("write-tree")
        depth = 1 if self.new_root else self.depth + 1
        what = f"rooms state 2 #{depth}: {self.result.sent} lines, {len(set(self.result.files_out))} files"
        args = ["commit-tree", tree, "-m", what + (" (the chain starts again)" if self.new_root else "")]
        if self.fetched and not self.new_root:
            args += ["-p", self.fetched]
        return self.git.out(*args)

    def new_state(self, commit: str | None) -> dict[str, Any]:
        from rooms_cli.store.clock import now_iso

        depth = 1 if self.new_root else self.depth + (1 if commit != self.fetched else 0)
        return {**{k: v for k, v in self.state.items() if k in ("generation", "cuts")}, "version": STATE_VERSION,
                "commit": commit, "depth": depth, "at": now_iso(), "files": self.files}


def _to_merge(sizes: dict[str, int]) -> list[str]:
    """Which chunks (by name, oldest first) a compaction merges: the longest run of the newest ones no
    bigger together than the chunk before them; all of them when no run of two or more is."""
    names = sorted(sizes)
    start, total = 0, 0
    for at in range(len(names) - 1, 0, -1):
        total += sizes[names[at]]
        if total <= sizes[names[at - 1]]:
            start = at
    if len(names) - start < 2:
        start = 0
    return names[start:]


# --- what a log's lines must be ----------------------------------------------------------------------------

_LOG_KINDS = (
    (re.compile(r"inbox/read/[^/]+\.jsonl"), "inbox-read"),
    (re.compile(r"inbox/[^/]+\.jsonl"), "inbox"),
    (re.compile(r"status/[^/]+\.jsonl"), "status"),
    (re.compile(r"memories/[^/]+\.jsonl"), "memory"),
    (re.compile(r"roundtables/queue\.jsonl"), "roundtable-queue"),
    (re.compile(r"schedule/fired\.jsonl"), "schedule-fired"),
    (re.compile(r"rooms/[^/]+/transcript\.jsonl"), "transcript"),
    (re.compile(r"rooms/[^/]+/state\.jsonl"), "room-event"),
    (re.compile(r"rooms/[^/]+/sessions/[^/]+\.jsonl"), "session"),
    (re.compile(r"rooms/[^/]+/board/tasks/t-[0-9a-z]+\.jsonl"), "task-event"),
    (re.compile(r"groups/[^/]+\.jsonl"), "group-event"),
)


def log_kind(rel: str) -> str | None:
    """The schema kind (store/schema.py) of the log at `rel` (a path under .rooms), or None (no reader
    names it: any JSON object a line passes)."""
    for pattern, kind in _LOG_KINDS:
        if pattern.fullmatch(rel):
            return kind
    return None


def _line_problem(line: bytes, kind: str | None, schema: Any) -> str | None:
    try:
        record = json.loads(line)
    except (UnicodeDecodeError, ValueError):
        return "is not valid JSON"
    if not isinstance(record, dict):
        return "is not a JSON object"
    if kind is None:
        return None
    problem: str | None = schema.problem(kind, record, strict=False)
    return problem


# --- for doctor -------------------------------------------------------------------------------------------


def reachable(project: Project, remote: str) -> str | None:
    """None when `remote` answers; else the one sentence saying why not (doctor's finding)."""
    try:
        git = _open_repo(project, remote)
    except SyncError as exc:
        return str(exc)
    proc = git.run("ls-remote", "--exit-code", remote, STATE_REF, check=False)
    if proc.returncode in (0, 2):  # 2: reachable, no state pushed yet
        return None
    return f"cannot reach git remote {remote!r}: {git_reason(proc.stderr)}"


def unsynced_age(project: Project, remote: str) -> float | None:
    """Seconds the oldest local change not yet synced with `remote` has waited, or None (nothing waits)."""
    from rooms_cli.store.clock import now

    state = _load_state(_state_path(project, remote))
    entries = state["files"]
    oldest = None
    for rel, st in _local_files(project).items():
        entry = entries.get(rel)
        waiting = not isinstance(entry, dict) or entry.get("stat") != _stat_key(st)
        if waiting and (oldest is None or st.st_mtime < oldest):
            oldest = st.st_mtime
    if oldest is None:
        return None
    return max(0.0, now().timestamp() - oldest)
