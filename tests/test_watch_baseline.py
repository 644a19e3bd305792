"""The kept baseline (watch/baseline.py): a watch starts where the last one left each log, reads only what
was appended since, and prints exactly what a watch that read every log whole would print."""

from __future__ import annotations

import json
import os
from pathlib import Path

from rooms_cli.store import atomic, jsonl
from rooms_cli.store.layout import watch_baseline_file as baseline_path
from rooms_cli.watch import Follower, Selection


def _message(k: int, text: str) -> dict:
    return {"id": f"m-{k:04d}", "ts": f"2026-11-21T09:{k // 60:02d}:{k % 60:02d}.000Z", "room": "default",
            "speaker": "alice", "kind": "message", "text": text}


def _write(path, records, mode="ab") -> None:
    with open(path, mode) as handle:
        handle.write(b"".join(json.dumps(r).encode() + b"\n" for r in records))


def _started(project) -> Follower:
    follower = Follower(project, Selection(all=True))
    assert follower.start() == []
    return follower


def _parsed(monkeypatch) -> list[int]:
    """Bytes of JSONL parsed by each read, in order (the real parser still parses them)."""
    sizes: list[int] = []
    real = jsonl.parse_bytes

    def counting(data: bytes, **kwargs):
        sizes.append(len(data))
        return real(data, **kwargs)

    monkeypatch.setattr(jsonl, "parse_bytes", counting)
    return sizes


def test_a_second_watch_reads_only_what_was_appended_and_prints_the_same(project, monkeypatch):
    path = project.path("rooms", "default", "transcript.jsonl")
    _write(path, [_message(k, f"old-{k}") for k in range(200)])
    _started(project)  # reads everything, keeps the baseline
    assert Path(baseline_path(project)).exists()
    _write(path, [_message(200, "between the watches")])
    sizes = _parsed(monkeypatch)
    second = _started(project)
    assert sum(sizes) == len(json.dumps(_message(200, "between the watches"))) + 1  # the appended line only
    _write(path, [_message(201, "new")])
    assert [e["text"] for e in second.poll() if e["type"] == "chat.message"] == ["new"]
    # a rehydrate (the same records and one more, os.replace'd) prints only the one more: the ids seen
    # before this watch came back with the baseline
    atomic.write_bytes(path, Path(path).read_bytes() + json.dumps(_message(202, "replaced")).encode() + b"\n")
    assert [e["text"] for e in second.poll() if e["type"] == "chat.message"] == ["replaced"]


def test_task_events_keep_their_title_and_bad_lines_are_warned_again(project, capsys):
    log = Path(project.path("rooms", "default", "board", "tasks", "t-01abc.jsonl"))
    log.parent.mkdir(parents=True, exist_ok=True)
    _write(log, [{"ev": "create", "task": "t-01ABC", "title": "ship it", "at": "2026-11-21T09:00:00.000Z"}])
    with open(log, "ab") as handle:
        handle.write(b"not json\n")
    _started(project)
    first = capsys.readouterr().err
    assert "line 2 is not valid JSON" in first
    jsonl._warned.clear()  # a new process warns afresh
    again = _started(project)
    assert capsys.readouterr().err == first
    _write(log, [{"ev": "claim", "task": "t-01ABC", "holder": "dev", "at": "2026-11-21T09:01:00.000Z"}])
    (claimed,) = again.poll()
    assert claimed["type"] == "task.claimed" and claimed["title"] == "ship it"
    with open(log, "ab") as handle:
        handle.write(b"[1]\n")
    assert again.poll() == []
    assert "line 4 is not a JSON object" in capsys.readouterr().err  # the line numbers went on from the baseline


def test_a_log_that_is_not_the_one_kept_is_read_whole(project, monkeypatch):
    path = Path(project.path("rooms", "default", "transcript.jsonl"))
    _write(path, [_message(k, f"old-{k}") for k in range(5)])
    _started(project)
    # replaced by a file of the same length whose last bytes differ (another inode, then the same inode)
    old = path.read_bytes()
    atomic.write_bytes(path, old.replace(b"old-4", b"new-4"))
    sizes = _parsed(monkeypatch)
    follower = _started(project)
    assert sum(sizes) == len(old)
    with open(path, "r+b") as handle:
        handle.write(old.replace(b"old-4", b"end-4"))
    sizes.clear()
    rewritten = _started(project)
    assert sum(sizes) == len(old)
    assert follower.poll() == [] and rewritten.poll() == []  # what a whole read saw counts as seen
    os.truncate(path, 0)
    sizes.clear()
    _started(project)
    assert sizes == []


def test_a_damaged_or_foreign_baseline_file_only_means_a_whole_read(project, monkeypatch):
    path = Path(project.path("rooms", "default", "transcript.jsonl"))
    _write(path, [_message(k, f"old-{k}") for k in range(3)])
    kept = Path(baseline_path(project))
    for content in (b"{not json", b'{"version": 1, "logs": {"%s": {"seal": "x"}}}' % str(path).encode(),
                    b'{"version": 99}'):
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_bytes(content)
        sizes = _parsed(monkeypatch)
        follower = _started(project)
        assert sum(sizes) == path.stat().st_size
        _write(path, [_message(10 + len(content), "next")])
        assert [e["text"] for e in follower.poll()] == ["next"]


def test_a_renamed_groups_log_still_counts_the_old_logs_records_as_seen(project, monkeypatch):
    groups = Path(project.path("groups"))
    groups.mkdir(parents=True, exist_ok=True)
    history = [{"ev": "created", "ts": "2026-11-21T09:00:00.000Z"},
               {"ev": "broadcast", "id": "b-1", "text": "go", "ts": "2026-11-21T09:00:01.000Z"}]
    renamed = {"ev": "renamed", "from": "alpha", "to": "beta", "ts": "2026-11-21T09:00:02.000Z"}
    _write(groups / "alpha.jsonl", [*history, renamed])
    _write(groups / "beta.jsonl", [renamed])
    _started(project)
    sizes = _parsed(monkeypatch)
    taken_back = _started(project)
    assert sizes == []  # neither log changed: both taken back, nothing parsed
    Path(baseline_path(project)).unlink()
    read_whole = _started(project)
    assert sizes != []
    # the new log rewritten whole with the old one's history: only the record after it is new
    reply = {"ev": "reply", "id": "b-1", "text": "done", "ts": "2026-11-21T09:00:03.000Z"}
    atomic.write_bytes(groups / "beta.jsonl", b"".join(json.dumps(r).encode() + b"\n" for r in [*history, renamed, reply]))
    assert [e["type"] for e in taken_back.poll()] == [e["type"] for e in read_whole.poll()] == ["group.reply"]
    # a group's log that grew is read whole (an appended `renamed` would change what counts as seen)
    _write(groups / "alpha.jsonl", [{"ev": "dropped", "ts": "2026-11-21T09:00:04.000Z"}])
    _started(project)
    sizes.clear()
    _write(groups / "alpha.jsonl", [{"ev": "dropped", "ts": "2026-11-21T09:00:05.000Z"}])
    _started(project)
    size = (groups / "alpha.jsonl").stat().st_size
    assert sizes == [size, size]  # its scan for renames and its read, as without a kept baseline; beta: nothing
