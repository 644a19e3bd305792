"""The one cache primitive (store/cache.py): keyed by file identity, replaced atomically, never fatal."""

from __future__ import annotations

import os
import time

import pytest

from rooms_cli.store import cache, jsonl, known


def test_any_write_to_a_file_changes_its_identity(tmp_path):
    log = tmp_path / "log.jsonl"
    jsonl.append(log, {"id": "a"})
    first = cache.identity(log)
    jsonl.append(log, {"id": "b"})  # an append grows it
    grown = cache.identity(log)
    replacement = tmp_path / "new"
    replacement.write_bytes(log.read_bytes())
    os.replace(replacement, log)  # the same bytes in a new file (a git checkout)
    assert len({tuple(first), tuple(grown), tuple(cache.identity(log))}) == 3


def test_a_missing_file_has_no_identity(tmp_path):
    assert cache.identity(tmp_path / "absent") is None
    assert cache.identity(tmp_path / "absent" / "below") is None


@pytest.mark.parametrize("name", ["index.json", "g.head.json"])
def test_a_saved_document_loads_back_at_its_version_only(tmp_path, name):
    path = tmp_path / "run" / name
    cache.save(path, {"version": 2, "tasks": {"t-1": [1, 2]}})
    assert cache.load(path, 2) == {"version": 2, "tasks": {"t-1": [1, 2]}}
    assert cache.load(path, 3) is None  # another layout: rebuilt, never misread
    assert [p.name for p in path.parent.iterdir()] == [name]  # no temp file left


@pytest.mark.parametrize("name", ["index.json", "g.head.json"])
@pytest.mark.parametrize("blob", [b"", b"{not json", b"\x80\x05garbage", b"[1, 2]", b"[" * 100_000])
def test_a_missing_damaged_or_foreign_cache_loads_as_none(tmp_path, name, blob):
    path = tmp_path / name
    assert cache.load(path, 1) is None
    path.write_bytes(blob)
    assert cache.load(path, 1) is None


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through a read-only mode")
def test_saving_on_a_read_only_tree_stores_nothing_and_raises_nothing(tmp_path):
    tree = tmp_path / ".rooms"
    tree.mkdir()
    tree.chmod(0o555)
    try:
        cache.save(tree / "run" / "board" / "demo.json", {"version": 1})
        assert list(tree.iterdir()) == []
    finally:
        tree.chmod(0o755)


def test_saving_where_no_folder_can_be_made_stores_nothing_and_raises_nothing(tmp_path):
    """What a read-only tree, a full disk or a file in the folder's place does to a read path: nothing."""
    (tmp_path / "run").write_text("a file where run/ should be")
    cache.save(tmp_path / "run" / "board" / "demo.json", {"version": 1})
    cache.save(tmp_path / "run" / "groups" / "g.json", {"version": 1})
    assert (tmp_path / "run").read_text() == "a file where run/ should be"
    assert cache.load(tmp_path / "run" / "board" / "demo.json", 1) is None


def test_a_file_written_just_now_is_not_settled(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("a: 1\n")
    st = os.stat(path)
    assert not cache.settled(st, time.time())
    assert cache.settled(st, st.st_mtime + cache.RACY_S)


def test_a_memo_starts_over_at_its_cap_and_never_grows_past_it():
    memo: dict[str, int] = {}
    for n in range(10):
        assert known.remember(memo, f"k{n}", n, cap=4) == n
        assert len(memo) <= 4
    assert memo == {"k8": 8, "k9": 9}  # cleared at k8, the fifth key after the last start
    known.remember(memo, "k9", 90, cap=2)  # a key already held is replaced, never a reason to clear
    known.remember(memo, "k9", 91, cap=2)
    assert memo == {"k8": 8, "k9": 91}


def test_load_bytes_with_a_memo_decodes_the_same_bytes_once(tmp_path, monkeypatch):
    path = tmp_path / "index.json"
    cache.save(path, {"version": 1, "n": 1})
    memo: dict = {}
    blob, first = cache.load_bytes(path, 1, memo)
    calls = []
    monkeypatch.setattr(cache, "decode", lambda b, v: calls.append(b) or {"version": v, "n": 2})
    again_blob, again = cache.load_bytes(path, 1, memo)
    assert (again_blob, again) == (blob, first) and again is first and calls == []
    cache.save(path, {"version": 1, "n": 3})  # other bytes: decoded again
    assert cache.load_bytes(path, 1, memo)[1] == {"version": 1, "n": 2} and len(calls) == 1
    assert cache.load_bytes(tmp_path / "absent.json", 1, memo) == (None, None)


def test_a_seal_taken_through_a_descriptor_equals_the_seal_by_path(tmp_path):
    log = tmp_path / "log.jsonl"
    jsonl.append(log, {"id": "a"})
    end = log.stat().st_size
    fd = os.open(log, os.O_RDONLY)
    try:
        assert known.seal_fd(fd, end) == known.seal(log, end)
        assert known.seal_fd(fd, end + 1)[2] is None  # the file is shorter than the end sealed
    finally:
        os.close(fd)
