"""`rooms sync`: carry `.rooms/` both ways through a git remote, on a ref of its own (docs/git.md).

State travels on `refs/rooms/state`, a chain of commits built with git plumbing and a private index
(`.rooms/run/sync/index-<remote>`); the user's branches, index, HEAD and work tree outside `.rooms/`
are never touched. The ref's tree:

    log/<path under .rooms>/<chunk>   a JSONL log, as append-only chunks: each sync that has new lines
                                      of the log adds one chunk blob holding just those lines
    file/<path under .rooms>          any other file (agents, saves, spawn records…), whole

A sync: fetch the remote's ref into `refs/rooms/remote-state/<remote>`; read only the chunks added
since the last sync (`git diff-tree`), append their lines that this clone lacks to the local logs
(under each log's lock), take or offer whole files; then push a commit holding this clone's new
lines as new chunks, with a compare-and-swap (`--force-with-lease` on the value fetched). Another
clone that pushed first makes the push fail: fetch again, merge again, retry with backoff.

Incremental: `.rooms/run/sync/<remote>.json` remembers the last synced commit and, per file, how far
the local log was synced (inode and byte offset) and the blob of a whole file on both sides. A sync
reads the local bytes appended since, the remote chunks added since, and hashes only files whose
stat changed: its cost follows what changed, not the history. A local log that git rewrote (a pull
gives it a new inode) or the first sync reads both sides whole and takes the union.

Merging: logs are the union of their lines (a line both sides have counts once; readers order and
dedupe records, store/order.py). Whole files: the side that changed since the last sync wins; both
changed and different: the content whose blob id is greater wins on every clone (a deletion loses
to a change), and the local loser is kept under `.rooms/run/sync/conflicts/`.

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
from collections.abc import Callable
from pathlib import Path

from rooms_cli.core.errors import Conflict, RoomsError
from rooms_cli.core.records import dataclass, field  # dataclasses without inspect (records.py)
from rooms_cli.store import atomic
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import Project

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost); mypy reads the block
if TYPE_CHECKING:
    from typing import Any

STATE_REF = "refs/rooms/state"
RETRIES = 6
_SKIP_DIRS = {"run"}
_SKIP_SUFFIXES = (".lock", ".tmp")


class SyncError(RoomsError):
    """A sync that could not run or finish; nothing local is lost (exit 1)."""

    code = "sync_failed"


class SyncRejected(Conflict):
    """Other clones kept pushing first: the push was refused after every retry (exit 3)."""

    code = "sync_rejected"


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
    attempts: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"attempts": self.attempts, "commit": self.commit, "conflicts": self.conflicts,
                "files_in": self.files_in, "files_out": self.files_out, "pushed": self.pushed,
                "received": self.received, "remote": self.remote, "seconds": round(self.seconds, 3),
                "sent": self.sent}


# --- git ------------------------------------------------------------------------------------------------


class Git:
    """The one place that runs git (for sync, and for the reservations' pre-commit guard): in the given
    directory, never prompting. `purpose` names the command that needs git, for the error when it is missing."""

    def __init__(self, cwd: Path, index: Path | None = None, purpose: str = "rooms sync"):
        self.cwd = cwd
        self.purpose = purpose
        self.env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
        self.env.setdefault("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")
        for key, value in (("GIT_AUTHOR_NAME", "rooms sync"), ("GIT_AUTHOR_EMAIL", "rooms@localhost"),
                           ("GIT_COMMITTER_NAME", "rooms sync"), ("GIT_COMMITTER_EMAIL", "rooms@localhost")):
            self.env.setdefault(key, value)
        if index is not None:
            self.env["GIT_INDEX_FILE"] = str(index)
        self.timeout = float(os.environ.get("ROOMS_SYNC_TIMEOUT", "60"))

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> subprocess.CompletedProcess[Any]:
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
            raise SyncError(f"git {' '.join(args[:2])} failed: {_first_line(proc.stderr)}", code="git_failed")
        return proc

    def out(self, *args: str, input: bytes | None = None) -> str:
        stdout: bytes = self.run(*args, input=input).stdout
        return stdout.decode("utf-8", "replace").strip()


def _first_line(data: bytes) -> str:
    lines = [line.strip() for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    fatal = [line for line in lines if line.startswith(("fatal:", "error:", "remote:"))]
    return (fatal or lines or ["no output"])[0]


def blob_id(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints), without running git."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


# --- local files ------------------------------------------------------------------------------------------


def _local_files(project: Project) -> dict[str, os.stat_result]:
    """Every file under .rooms/ that travels (not run/, locks or temporary files), by path under .rooms."""
    found: dict[str, os.stat_result] = {}
    base = str(project.dir)
    for folder, dirs, files in os.walk(base):
        rel_dir = os.path.relpath(folder, base)
        if rel_dir == ".":
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS]
            rel_dir = ""
        for name in files:
            if name.endswith(_SKIP_SUFFIXES):
                continue
            path = os.path.join(folder, name)
            st = os.lstat(path)
            if not _is_regular(st):
                continue
            found[f"{rel_dir}/{name}" if rel_dir else name] = st
    return found


def _is_regular(st: os.stat_result) -> bool:
    import stat as stat_module

    return stat_module.S_ISREG(st.st_mode)


def _lines(data: bytes) -> list[bytes]:
    return [line for line in data.splitlines(keepends=True) if line.strip()]


# --- state ------------------------------------------------------------------------------------------------


def _state_path(project: Project, remote: str) -> Path:
    return project.path("run", "sync", f"{_safe(remote)}.json")


def _safe(remote: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in remote.lower()) or "remote"


def _load_state(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {"commit": None, "files": {}}
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        return {"commit": None, "files": {}}
    return data


def last_synced(project: Project, remote: str) -> dict[str, Any] | None:
    """When this clone last synced with `remote` and at which commit, or None (never)."""
    state = _load_state(_state_path(project, remote))
    return {"commit": state["commit"], "at": state.get("at")} if state.get("commit") else None


# --- the remote view (what before_push hooks read) --------------------------------------------------------


class RemoteView:
    """The remote's state as fetched: read a log's records, and what this sync is about to add."""

    def __init__(self, git: Git, commit: str | None):
        self.git, self.commit = git, commit

    def log_lines(self, rel: str) -> list[bytes]:
        """Every line of the log `rel` (a path under .rooms) on the remote, chunk by chunk."""
        if self.commit is None:
            return []
        listing = self.git.run("ls-tree", "-z", self.commit, f"log/{rel}/", check=False).stdout
        blobs = [entry.split(b"\t", 1)[0].split()[2].decode() for entry in listing.split(b"\0") if entry]
        return [line for data in _cat_blobs(self.git, blobs).values() for line in _lines(data)]

    def records(self, rel: str) -> list[dict[str, Any]]:
        out = []
        for line in self.log_lines(rel):
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                out.append(record)
        return out


def _cat_blobs(git: Git, blobs: list[str]) -> dict[str, bytes]:
    """The contents of `blobs`, in one `git cat-file --batch`."""
    if not blobs:
        return {}
    raw = git.run("cat-file", "--batch", input="".join(f"{b}\n" for b in blobs).encode()).stdout
    out: dict[str, bytes] = {}
    pos = 0
    for blob in blobs:
        header_end = raw.index(b"\n", pos)
        header = raw[pos:header_end].split()
        if len(header) < 3 or header[1] == b"missing":
            raise SyncError(f"the remote state names a blob git does not have ({blob}); run rooms sync again", code="git_failed")
        size = int(header[2])
        out[blob] = raw[header_end + 1: header_end + 1 + size]
        pos = header_end + 1 + size + 1
    return out


# --- the sync ---------------------------------------------------------------------------------------------


def sync(project: Project, remote: str | None = None, *, before_push: Callable[[RemoteView], None] | None = None,
         retries: int = RETRIES) -> SyncResult:
    """Merge `.rooms/` with `remote`'s `refs/rooms/state` both ways; see the module docstring.

    `before_push(view)` runs after each fetch, before the merge: it may read the remote's logs and
    append to local ones (a claim that lost withdraws itself), and what it appends is pushed too.
    """
    started = time.monotonic()
    remote = remote or "origin"
    git = _open_repo(project, remote)
    state_path = _state_path(project, remote)
    state_path.parent.mkdir(parents=True, exist_ok=True)
    result = SyncResult(remote=remote)
    with locked(state_path, what=f"sync with {remote}"):
        _clear_stale_locks(git, remote)
        state = _load_state(state_path)
        for attempt in range(1, retries + 1):
            result.attempts = attempt
            fetched = _fetch(git, remote)
            _refuse_rewritten(git, remote, state.get("commit"), fetched)
            if before_push is not None:
                before_push(RemoteView(git, fetched))
            merge = _Merge(project, git, state, fetched, result)
            merge.run()
            if not merge.changes:
                state = merge.new_state(fetched)
                _save_state(state_path, state)
                result.commit = fetched
                break
            commit = merge.commit(remote, fetched)
            if _push(git, remote, commit, fetched):
                git.run("update-ref", f"refs/rooms/remote-state/{remote}", commit)
                state = merge.new_state(commit)
                _save_state(state_path, state)
                result.commit, result.pushed = commit, True
                break
            result.received = result.sent = 0
            result.files_in, result.files_out, result.conflicts = [], [], []
            time.sleep(min(2.0, 0.05 * (2 ** attempt)) * (0.5 + int.from_bytes(os.urandom(2), "big") / 65535))
        else:
            raise SyncRejected(f"the push to {remote} was refused {retries} times (other clones kept pushing first); "
                               f"nothing was lost: run rooms sync again")
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
        known = f"this repository has {', '.join(names)}" if names else "this repository has none"
        raise SyncError(f"no git remote named {remote!r} ({known}): add it with git remote add {remote} URL, or pass "
                        f"--remote NAME (or sync: {{remote: NAME}} in .rooms.yaml)", code="no_remote")
    git.env["GIT_INDEX_FILE"] = str(project.path("run", "sync", f"index-{_safe(remote)}"))
    return git


def _clear_stale_locks(git: Git, remote: str) -> None:
    """Remove git lock files a killed sync left on this clone's private index and tracking ref.

    Only sync uses them, and the caller holds the sync lock: a lock file there belongs to a sync that
    died (or to an orphaned git child of one, whose result no longer matters)."""
    index = Path(git.env["GIT_INDEX_FILE"])
    git_dir = Path(git.cwd) / git.out("rev-parse", "--git-dir")
    for stale in (index.with_name(index.name + ".lock"), git_dir / "refs" / "rooms" / "remote-state" / f"{remote}.lock"):
        try:
            stale.unlink()
        except FileNotFoundError:
            pass


def _fetch(git: Git, remote: str) -> str | None:
    """Fetch the remote's state ref; its commit, or None when the remote has none yet."""
    tracking = f"refs/rooms/remote-state/{remote}"
    for _ in range(40):  # a git child of a killed sync may still hold the tracking ref's lock for a moment
        proc = git.run("fetch", "--no-tags", "--no-write-fetch-head", "--quiet", remote, f"+{STATE_REF}:{tracking}",
                       check=False)
        if proc.returncode == 0 or b"lock" not in proc.stderr:
            break
        time.sleep(0.05)
        _clear_stale_locks(git, remote)
    if proc.returncode != 0:
        text = proc.stderr.decode("utf-8", "replace")
        if "couldn't find remote ref" in text or "could not find remote ref" in text:
            git.run("update-ref", "-d", tracking, check=False)
            return None
        raise SyncError(f"cannot reach git remote {remote!r}: {_first_line(proc.stderr)}; nothing was synced, "
                        f"nothing local is lost", code="remote_unreachable")
    return git.out("rev-parse", "--verify", "--quiet", tracking)


def _refuse_rewritten(git: Git, remote: str, known: str | None, fetched: str | None) -> None:
    """The remote ref must descend from what this clone last synced; else it was rewritten by hand."""
    if not known or fetched == known:
        return
    if fetched is not None and git.run("merge-base", "--is-ancestor", known, fetched, check=False).returncode == 0:
        return
    what = "deleted" if fetched is None else "rewritten (it no longer contains what this clone synced)"
    raise SyncError(f"{STATE_REF} on {remote!r} was {what}; nothing local is lost. To merge everything again from "
                    f"scratch, remove .rooms/run/sync/{_safe(remote)}.json and run rooms sync", code="remote_rewritten")


def _push(git: Git, remote: str, commit: str, expected: str | None) -> bool:
    """Compare-and-swap the remote ref from `expected` to `commit`; False when another clone got there first."""
    lease = f"--force-with-lease={STATE_REF}:{expected or ''}"
    proc = git.run("push", "--quiet", "--porcelain", lease, remote, f"{commit}:{STATE_REF}", check=False)
    if proc.returncode == 0:
        return True
    text = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if "[rejected]" in text or "stale info" in text or "non-fast-forward" in text or "fetch first" in text \
            or "failed to update ref" in text or "cannot lock ref" in text:
        return False
    raise SyncError(f"cannot push to git remote {remote!r}: {_first_line(proc.stderr)}; nothing local is lost",
                    code="remote_unreachable")


def _save_state(path: Path, state: dict[str, Any]) -> None:
    atomic.write_json(path, state)


class _Merge:
    """One attempt: local and remote changes since the last sync, merged; the commit to push."""

    def __init__(self, project: Project, git: Git, state: dict[str, Any], fetched: str | None, result: SyncResult):
        self.project, self.git, self.state, self.fetched, self.result = project, git, state, fetched, result
        self.files: dict[str, dict[str, Any]] = {rel: dict(entry) for rel, entry in state["files"].items()}
        self.index_entries: list[str] = []  # `git update-index --index-info` lines
        self.new_blobs: dict[str, bytes] = {}
        self.changes = False

    # what changed on the remote since the last sync: {rel: [new chunk blobs]} and {rel: blob or None}
    def _remote_changes(self, everything: bool = False) -> tuple[dict[str, list[str]], dict[str, str | None], bool]:
        logs: dict[str, list[str]] = {}
        files: dict[str, str | None] = {}
        known = None if everything else self.state.get("commit")
        if self.fetched is None:
            return logs, files, False
        if known and known != self.fetched:
            raw = self.git.run("diff-tree", "-r", "-z", "--no-commit-id", "--no-renames", known, self.fetched).stdout
            fields = raw.split(b"\0")
            for meta, path in zip(fields[0::2], fields[1::2], strict=False):
                parts = meta.split()
                if len(parts) < 5:
                    continue
                self._note_remote(path.decode("utf-8", "surrogateescape"), parts[3].decode(), parts[4] == b"D", logs, files)
            return logs, files, False
        if known == self.fetched:
            return logs, files, False
        raw = self.git.run("ls-tree", "-r", "-z", self.fetched).stdout
        for entry in raw.split(b"\0"):
            if entry:
                meta, path = entry.split(b"\t", 1)
                self._note_remote(path.decode("utf-8", "surrogateescape"), meta.split()[2].decode(), False, logs, files)
        return logs, files, True

    @staticmethod
    def _note_remote(path: str, blob: str, deleted: bool, logs: dict[str, Any], files: dict[str, Any]) -> None:

        kind, _, rest = path.partition("/")
        if kind == "log":
            rel = rest.rsplit("/", 1)[0]
            if not deleted:
                logs.setdefault(rel, []).append(blob)
        elif kind == "file":
            files[rest] = None if deleted else blob

    def run(self) -> None:
        remote_logs, remote_files, full_remote = self._remote_changes()
        local = _local_files(self.project)
        known = self.state.get("commit")
        logs = {rel for rel in local if rel.endswith(".jsonl")} | set(remote_logs)
        need_full = set()
        if self.fetched and not full_remote:
            need_full = {rel for rel in logs if not self._incremental(rel, local.get(rel))}
        if need_full:  # a log git rewrote (a pull) or never synced: every chunk of it on the remote
            everything = self._remote_changes(everything=True)[0]
            remote_logs.update({rel: everything.get(rel, []) for rel in need_full})
        contents = _cat_blobs(self.git, [b for blobs in remote_logs.values() for b in blobs]
                              + [b for b in remote_files.values() if b])
        if self.fetched:
            self.git.run("read-tree", self.fetched)
        else:
            self.git.run("read-tree", "--empty")
        for rel in sorted(logs):
            incoming = [line for blob in remote_logs.get(rel, []) for line in _lines(contents[blob])]
            full = full_remote or rel in need_full or not known
            self._merge_log(rel, local.get(rel), incoming, full)
        others = ({rel for rel in local if not rel.endswith(".jsonl")} | set(remote_files)
                  | {rel for rel, e in self.files.items() if e.get("kind") == "file"})
        for rel in sorted(others):
            base = self.files.get(rel, {}).get("blob")
            remote_blob = remote_files[rel] if rel in remote_files else (None if full_remote or not self.fetched else base)
            self._merge_file(rel, local.get(rel), remote_blob, contents.get(remote_blob or ""))

    def _incremental(self, rel: str, st: os.stat_result | None) -> bool:
        entry = self.files.get(rel)
        return bool(entry and st is not None and entry.get("ino") == st.st_ino and entry.get("off", 0) <= st.st_size)

    def _merge_log(self, rel: str, st: os.stat_result | None, incoming: list[bytes], full: bool) -> None:
        from rooms_cli.store import changes, jsonl

        entry = self.files.get(rel) or {}
        if not full and not incoming and st is not None and entry.get("off") == st.st_size:
            return  # nothing new on either side: not even the log's lock
        if st is None and not incoming:
            return
        path = self.project.dir / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with locked(path):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                jsonl._refuse_unresolved_merge(fd, path)
                jsonl._repair_torn_tail(fd, path)
                size = os.fstat(fd).st_size
                start = 0 if full else min(entry.get("off", 0), size)
                ours = _lines(os.pread(fd, size - start, start)) if size > start else []
                have = set(ours)
                missing = [line for line in dict.fromkeys(incoming) if line not in have]
                if missing:
                    data = memoryview(b"".join(missing))
                    while data:
                        data = data[os.write(fd, data):]
                    os.fsync(fd)
                after = os.fstat(fd)
            finally:
                os.close(fd)
        if missing:
            changes.note(path)
            self.result.received += len(missing)
            self.result.files_in.append(rel)
        arrived = set(incoming)
        outgoing = [line for line in dict.fromkeys(ours) if line not in arrived]
        if outgoing:
            data_out = b"".join(outgoing)
            chunk = f"{time.time_ns() // 1_000_000:013d}-{os.urandom(4).hex()}"
            blob = blob_id(data_out)
            self.new_blobs[blob] = data_out
            self.index_entries.append(f"100644 {blob}\tlog/{rel}/{chunk}")
            self.result.sent += len(outgoing)
            self.result.files_out.append(rel)
            self.changes = True
        self.files[rel] = {"kind": "log", "ino": after.st_ino, "off": after.st_size}

    def _merge_file(self, rel: str, st: os.stat_result | None, remote_blob: str | None, remote_data: bytes | None) -> None:
        entry = self.files.get(rel) or {}
        base = entry.get("blob")
        path = self.project.dir / rel
        stat_key = [st.st_ino, st.st_size, st.st_mtime_ns] if st is not None else None
        local_data = None
        if st is None:
            local_blob = None
        elif entry.get("stat") == stat_key and base is not None:
            local_blob = base
        else:
            local_data = path.read_bytes()
            local_blob = blob_id(local_data)
        if local_blob == remote_blob:
            take = local_blob
        elif local_blob == base:
            take = remote_blob
        elif remote_blob == base:
            take = local_blob
        else:  # both changed since the last sync (or never synced) and differ: the same choice on every clone
            take = max(b for b in (local_blob, remote_blob) if b is not None)  # a change beats a deletion
            if local_blob is not None and take != local_blob:
                self._keep_loser(rel, local_data if local_data is not None else path.read_bytes(), local_blob)
            self.result.conflicts.append({"path": rel, "kept": take, "local": local_blob, "remote": remote_blob})
        if take != local_blob:
            if take is None:
                path.unlink(missing_ok=True)
                stat_key = None
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                atomic.write_bytes(path, remote_data or b"")
                st = os.lstat(path)
                stat_key = [st.st_ino, st.st_size, st.st_mtime_ns]
            self.result.files_in.append(rel)
        if take != remote_blob:
            if take is None:
                self.index_entries.append(f"0 {'0' * 40}\tfile/{rel}")
            else:
                self.new_blobs[take] = local_data if local_data is not None else path.read_bytes()
                self.index_entries.append(f"100644 {take}\tfile/{rel}")
            self.result.files_out.append(rel)
            self.changes = True
        if take is None:
            self.files.pop(rel, None)
        else:
            self.files[rel] = {"kind": "file", "blob": take, "stat": stat_key}

    def _keep_loser(self, rel: str, data: bytes, blob: str) -> None:
        keep = self.project.path("run", "sync", "conflicts") / f"{rel}.{blob[:12]}"
        keep.parent.mkdir(parents=True, exist_ok=True)
        atomic.write_bytes(keep, data)

    def commit(self, remote: str, parent: str | None) -> str:
        """Write the new blobs, update the private index, and commit its tree on top of `parent`."""
        if self.new_blobs:
            tmp = self.project.path("run", "sync", "blobs")
            tmp.mkdir(parents=True, exist_ok=True)
            names: list[str] = []
            for blob, data in self.new_blobs.items():
                (tmp / blob).write_bytes(data)
                names.append(str(tmp / blob))
            written = self.git.out("hash-object", "-w", "--no-filters", "--stdin-paths",
                                   input="".join(f"{n}\n" for n in names).encode("utf-8", "surrogateescape")).split()
            for name in names:
                os.unlink(name)
            if sorted(written) != sorted(self.new_blobs):
                raise SyncError("git stored different blobs than rooms computed; nothing was pushed", code="git_failed")
        entries = "".join(f"{e}\0" for e in self.index_entries).encode("utf-8", "surrogateescape")
        self.git.run("update-index", "-z", "--index-info", input=entries)
        tree = self.git.out("write-tree")
        args = ["commit-tree", tree, "-m", f"rooms sync: {self.result.sent} lines, {len(self.result.files_out)} files"]
        if parent:
            args += ["-p", parent]
        return self.git.out(*args)

    def new_state(self, commit: str | None) -> dict[str, Any]:
        from rooms_cli.store.clock import now_iso

        return {"commit": commit, "index": commit, "at": now_iso(), "files": self.files}


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
    return f"cannot reach git remote {remote!r}: {_first_line(proc.stderr)}"


def unsynced_age(project: Project, remote: str) -> float | None:
    """Seconds the oldest local change not yet synced with `remote` has waited, or None (nothing waits)."""
    from rooms_cli.store.clock import now

    state = _load_state(_state_path(project, remote))
    files = state["files"]
    oldest = None
    for rel, st in _local_files(project).items():
        entry = files.get(rel)
        if rel.endswith(".jsonl"):
            waiting = entry is None or entry.get("ino") != st.st_ino or entry.get("off", 0) < st.st_size
        else:
            waiting = entry is None or entry.get("stat") != [st.st_ino, st.st_size, st.st_mtime_ns]
        if waiting and (oldest is None or st.st_mtime < oldest):
            oldest = st.st_mtime
    if oldest is None:
        return None
    return max(0.0, now().timestamp() - oldest)
