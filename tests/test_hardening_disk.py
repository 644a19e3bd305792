"""Hardening, round two: a full disk, a size limit, a read-only tree.

Every command run on a full disk (a real 4 MB tmpfs, filled) either works (it only reads) or
fails with one sentence naming the file it could not write, exit 1, and leaves every file as it
was: no empty log created, no partial line, no temp file. Mounting needs root; where it is not
allowed the same rule is checked with a real kernel limit instead (RLIMIT_FSIZE = 0: every write
of a byte fails with EFBIG), which runs anywhere. Reading commands work on a read-only tree.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import hardening_kit
import pytest
from conftest import rooms_env
from hardening_kit import changed_files, invoke, problems_with_error, snapshot
from test_hardening_matrix import STDIN, VALID, prepare

template = hardening_kit.template  # fixture

# reading commands: they must work on a full disk and on a read-only tree
READERS = {
    "transcript", "board", "inbox", "agents", "attention", "config show", "agent list", "agent show",
    "models list", "room list", "room show", "task show", "roundtable formats", "memory list",
    "group status", "group list", "schedule", "tick", "doctor", "watch",
}


def _mount(kind: str, target: Path, *extra: str) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    proc = subprocess.run(["mount", *extra, "-t", kind, kind, str(target)] if kind == "tmpfs"
                          else ["mount", *extra, str(target)], capture_output=True)
    return proc.returncode == 0


@contextlib.contextmanager
def mounted_tmpfs(target: Path, size: str):
    target.mkdir(parents=True, exist_ok=True)
    if not _mount("tmpfs", target, "-o", f"size={size}"):
        pytest.skip("cannot mount a tmpfs here (needs root); test_a_size_limit_* checks the rule anywhere")
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], capture_output=True)


def fill(disk: Path) -> None:
    """Write filler files until the disk is full (big blocks, then single bytes for the last one)."""
    for name, block in (("filler", b"\0" * 65536), ("filler2", b"\0")):
        with contextlib.suppress(OSError), open(disk / name, "ab", buffering=0) as handle:
            while handle.write(block):
                pass


def free(disk: Path) -> None:
    for name in ("filler", "filler2"):
        with contextlib.suppress(FileNotFoundError):
            (disk / name).unlink()


def leftovers(root: Path, before: dict[str, bytes] | None = None) -> list[str]:
    """Temp files, and empty files a write created (a log is never created empty), left behind."""
    found = []
    for p in Path(root).rglob("*"):
        if p.is_file() and not p.name.endswith(".lock"):
            if p.name.endswith(".tmp"):
                found.append(f"temp file {p}")
            elif (p.stat().st_size == 0 and (before is None or str(p.relative_to(root)) not in before)
                  and "run" not in p.relative_to(root).parts):  # run/: local, out of git (cron's tick.log)
                found.append(f"empty file {p}")
    return found


FULL_DISK: dict[str, int] = {}  # command -> 0 (worked) or 1 (refused); reported in docs/hardening.md
PARTLY: dict[str, list[str]] = {}  # command -> the files it completed before failing


def test_every_command_on_a_full_disk_names_the_file_and_leaves_every_file_as_it_was(template, tmp_path, monkeypatch):
    with mounted_tmpfs(tmp_path / "disk", "8m") as disk:
        root = disk / "proj"
        monkeypatch.setenv("ROOMS_DIR", str(root))
        monkeypatch.setenv("ROOMS_AGENT", "you")
        problems = []
        for path in sorted(VALID):
            # each command on its own copy: a small append can still fit in a file's last block
            monkeypatch.chdir(disk)
            free(disk)
            for old in (root, disk / "fresh"):
                shutil.rmtree(old, ignore_errors=True)
            shutil.copytree(template, root, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
            monkeypatch.chdir(root)
            args = prepare(path, root)
            fill(disk)
            before = snapshot(root)
            out = invoke([*path.split(), *args], input=STDIN.get(path))
            FULL_DISK[path] = out.exit_code
            if out.exit_code != 0:
                found = problems_with_error(out)
                if "the disk is full" not in out.stderr or "cannot write " not in out.stderr:
                    found.append(f"does not say which file and why: {out.stderr.strip()[-300:]!r}")
                # a command of several writes may have made whole ones before the disk was full
                # (chat: the turn, then its session); each file still parses (doctor, below)
                PARTLY[path] = changed_files(before, snapshot(root))
                if found:
                    problems.append((path, found))
            elif path in READERS and changed_files(before, snapshot(root)):
                problems.append((path, [f"a reader changed {changed_files(before, snapshot(root))}"]))
            free(disk)
            if leftovers(root, before):
                problems.append((path, leftovers(root, before)))
            doctor = invoke(["doctor", "--offline", "--json"])
            if doctor.exit_code != 0:
                problems.append((path, [f"doctor: {doctor.stdout[-1000:]}"]))
        refused = sum(1 for code in FULL_DISK.values() if code)
        print(f"\nfull disk: {len(FULL_DISK)} commands, {refused} refused in one sentence, {len(FULL_DISK) - refused} worked; "
              f"completed some writes first: {sorted(p for p, c in PARTLY.items() if c)}")
        assert not problems, problems


def _limited():
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG, not a signal
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))


WRITERS = [
    ("task", "add", "Write the docs", "--lane", "scribe", "--done", "a docs page"),
    ("send", "ping", "--to", "researcher"),
    ("status", "set", "busy"),
    ("chat", "what about rate limits?", "--room", "demo-chat"),
    ("group", "spawn", "vote2", "--profile", "judge"),
    ("roundtable", "queue", "debate", "--topic", "monorepo", "--turns", "2", "--force"),
    ("agent", "new", "newbie"),
    ("room", "save", "--room", "demo-chat"),
]


@pytest.mark.parametrize("args", WRITERS, ids=lambda a: " ".join(a[:2]))
def test_a_size_limit_on_every_write_names_the_file_and_leaves_no_empty_or_partial_file(template, tmp_path, args):
    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
    before = snapshot(root)
    proc = subprocess.run([sys.executable, "-m", "rooms_cli", *args], capture_output=True, text=True, timeout=120,
                          env=rooms_env({"ROOMS_DIR": str(root), "ROOMS_AGENT": "you"}), preexec_fn=_limited)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    lines = [ln for ln in proc.stderr.splitlines() if not ln.startswith("warning:")]
    assert len(lines) == 1 and lines[0].startswith("error: cannot write ") and str(root) in lines[0], proc.stderr
    assert "internal error" not in proc.stderr
    changed = [c for c in changed_files(before, snapshot(root)) if not c.startswith(".rooms/run/")]
    assert changed == [] and leftovers(root, before) == []


def test_a_failed_append_cuts_the_log_back_and_removes_a_log_it_created(tmp_path, monkeypatch):
    """At the os.write boundary: half a line written, then ENOSPC."""
    import errno

    from rooms_cli.core.errors import StorageError
    from rooms_cli.store import jsonl

    real_write = os.write

    def half_then_full(fd, data):
        if len(data) > 4:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    old = tmp_path / "old.jsonl"
    old.write_bytes(b'{"id": "a"}\n')
    monkeypatch.setattr(os, "write", half_then_full)
    for path in (old, tmp_path / "new.jsonl"):
        with pytest.raises(StorageError, match=f"cannot write {path}: the disk is full"):
            jsonl.append(path, {"id": "b", "text": "x" * 100})
    monkeypatch.undo()
    assert old.read_bytes() == b'{"id": "a"}\n'
    assert not (tmp_path / "new.jsonl").exists()


@pytest.mark.parametrize("errname, says", [("ENOSPC", "the disk is full"), ("EDQUOT", "the disk quota is exceeded"),
                                           ("EROFS", "the file system is read-only")])
def test_a_failed_replace_names_the_file_and_leaves_the_old_one_and_no_temp_file(tmp_path, monkeypatch, errname, says):
    import errno

    from rooms_cli.core.errors import StorageError
    from rooms_cli.store import atomic

    target = tmp_path / "state.json"
    target.write_text("{}\n")

    def failing_fsync(fd):
        raise OSError(getattr(errno, errname), os.strerror(getattr(errno, errname)))

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(StorageError, match=f"cannot write {target}: {says}"):
        atomic.write_json(target, {"a": 1})
    monkeypatch.undo()
    assert target.read_text() == "{}\n"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


# -- a read-only tree ----------------------------------------------------------------------------


@contextlib.contextmanager
def read_only(root: Path):
    """`root` as a read-only tree: a read-only bind mount as root (chmod does not stop root), else chmod."""
    if os.geteuid() == 0:
        view = root.parent / "ro"
        view.mkdir()
        if not _mount("bind", view, "--bind", "-o", "ro", str(root)):
            pytest.skip("cannot bind-mount read-only here")
        subprocess.run(["mount", "-o", "remount,ro,bind", str(view)], capture_output=True)
        try:
            yield view
        finally:
            subprocess.run(["umount", "-l", str(view)], capture_output=True)
    else:
        modes = {p: p.stat().st_mode for p in [root, *root.rglob("*")] if not p.is_symlink()}
        for p in modes:
            p.chmod(modes[p] & ~0o222)
        try:
            yield root
        finally:
            for p, mode in modes.items():
                p.chmod(mode)


@pytest.mark.parametrize("args", [("inbox", "--peek"), ("attention", "--peek"), ("board",), ("agents",),
                                  ("transcript", "--room", "demo-chat"), ("group", "list"), ("room", "list"),
                                  ("doctor", "--offline")], ids=" ".join)
def test_reading_commands_work_on_a_read_only_tree(template, tmp_path, args):
    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
    with read_only(root) as view:
        probe = view / ".rooms" / "probe"
        with pytest.raises(OSError):
            probe.write_text("x")
        proc = subprocess.run([sys.executable, "-m", "rooms_cli", *args], capture_output=True, text=True, timeout=120,
                              env=rooms_env({"ROOMS_DIR": str(view), "ROOMS_AGENT": "you"}))
    assert proc.returncode == 0, proc.stderr
    assert "error" not in proc.stderr


def test_a_writing_command_on_a_read_only_tree_names_the_file(template, tmp_path):
    root = tmp_path / "proj"
    shutil.copytree(template, root, symlinks=True, ignore=shutil.ignore_patterns("*.lock"))
    with read_only(root) as view:
        proc = subprocess.run([sys.executable, "-m", "rooms_cli", "send", "hi", "--to", "researcher"],
                              capture_output=True, text=True, timeout=120,
                              env=rooms_env({"ROOMS_DIR": str(view), "ROOMS_AGENT": "you"}))
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr.startswith("error: cannot write ") and "inbox" in proc.stderr, proc.stderr
    assert "internal" not in proc.stderr
