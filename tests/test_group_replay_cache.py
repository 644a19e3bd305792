"""The group log replay resumes from a local cache: work stays flat as broadcasts grow, and the
result always equals a full replay (after appends, after a git merge that interleaves lines, and in a
fresh clone without `.rooms/run/`)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rooms_cli.groups import log
from rooms_cli.store import jsonl, layout

MEMBERS = [{"handle": "a", "profile": "x"}]


def _full(project, name):
    return log.replay(name, log.gather_events(project, name))


def _spawn(project, name="g"):
    log.append(project, name, log.event("created", name=name, gid="g-1"),
               log.event("member_added", handle="a", profile="x"), lock=True)


def _broadcast(project, n, name="g"):
    bid = f"b-{n}"
    log.append(project, name, log.event("broadcast", id=bid, fields={"objective": str(n)}, members=MEMBERS, sender="me"),
               log.event("reply", id=bid, handle="a", text=f"answer {n}", status="ok"),
               log.event("gathered", id=bid, result={}), lock=True)


def _decoded(project, name="g"):
    """The group, and how many log records were decoded to load it (every jsonl parse, counted)."""
    counted = []
    parse = jsonl.parse_bytes

    def counting(data, **kwargs):
        scan = parse(data, **kwargs)
        counted.append(len(scan.records))
        return scan

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(jsonl, "parse_bytes", counting)
        group = log.load_any(project, name)
    return group, sum(counted)


def test_replay_after_appends_equals_a_full_replay_and_decodes_only_the_new_events(project):
    _spawn(project)
    for n in range(5):
        _broadcast(project, n)
        group, _ = _decoded(project)
        assert group == _full(project, "g")
    _broadcast(project, 99)
    group, decoded = _decoded(project)
    assert decoded == 3
    assert group == _full(project, "g")
    assert [b.id for b in group.broadcasts][-1] == "b-99"


def test_replay_work_does_not_grow_with_the_number_of_broadcasts(project):
    work = {}
    for name, count in (("small", 10), ("big", 300)):
        _spawn(project, name)
        for n in range(count):
            _broadcast(project, n, name)
        log.load_any(project, name)  # the first read after many writes builds the cache
        _, warm = _decoded(project, name)
        _broadcast(project, count, name)
        _, after_one = _decoded(project, name)
        work[name] = (warm, after_one)
    assert work["small"] == work["big"] == (0, 3)


def _cached_log(project, broadcasts: int):
    """Group g with `broadcasts` gathered broadcasts, read once (so its replay cache is written); its log."""
    _spawn(project)
    for n in range(broadcasts):
        _broadcast(project, n)
    log.load_any(project, "g")
    return log.log_path(project, "g")


def _stamped_after(path, line: int, *events: dict) -> list[dict]:
    """`events` as another clone wrote them: stamped right after the log's `line`-th event (0-based),
    so they sort there in the one order (store/order.py), whatever their place in the file."""
    import json

    stamp = json.loads(Path(path).read_bytes().splitlines()[line])["hlc"]
    return [{**e, "hlc": f"{stamp[:-6]}zzzzz{n}"} for n, e in enumerate(events)]


def _merge_in_middle(path, events) -> list[bytes]:
    """Put `events` after the log's 4th line, where a union merge of another clone's appends can land them;
    the log's lines now."""
    lines = Path(path).read_bytes().splitlines(keepends=True)
    merged = lines[:4] + [(jsonl.dumps(e) + "\n").encode() for e in events] + lines[4:]
    Path(path).write_bytes(b"".join(merged))
    return merged


def test_a_merge_that_interleaves_lines_is_detected_and_replayed_in_full(project):
    path = _cached_log(project, broadcasts=3)
    # another clone's broadcast, stamped there right after our 4th event, lands in the middle after a union merge
    merged = _merge_in_middle(path, _stamped_after(path, 3,
                                                   log.event("broadcast", id="b-other", fields={}, members=MEMBERS, sender="them"),
                                                   log.event("gathered", id="b-other", result={})))
    group, decoded = _decoded(project)
    assert "b-other" in [b.id for b in group.broadcasts]
    assert group == _full(project, "g")
    assert decoded == len(merged)


def test_an_appended_event_that_sorts_before_the_cached_ones_means_a_full_replay(project):
    _spawn(project)
    _broadcast(project, 0)
    log.load_any(project, "g")
    (late,) = _stamped_after(log.log_path(project, "g"), 1,
                             log.event("broadcast", id="b-late", fields={}, members=MEMBERS, sender="them"))
    with open(log.log_path(project, "g"), "a") as f:
        f.write(jsonl.dumps(late) + "\n")
    group = log.load_any(project, "g")
    assert group == _full(project, "g")
    assert [b.id for b in group.broadcasts] == ["b-late", "b-0"]


def test_a_clone_without_the_cache_gets_the_same_state(project):
    _spawn(project)
    for n in range(4):
        _broadcast(project, n)
    warm = log.load_any(project, "g")
    shutil.rmtree(Path(layout.group_replay_cache(project, "g")).parent)
    assert log.load_any(project, "g") == warm == _full(project, "g")


def test_a_broken_cache_file_is_ignored(project):
    _spawn(project)
    _broadcast(project, 0)
    log.load_any(project, "g")
    Path(layout.group_replay_cache(project, "g")).write_bytes(b"not a cache")
    assert log.load_any(project, "g") == _full(project, "g")


# `group status` reads only the head cache: the newest broadcasts, those in flight, the last result


def _status_from_scratch(project, name="g"):
    """What `group status` says after a full replay (a clone without `.rooms/run/`)."""
    from rooms_cli.groups import status

    shutil.rmtree(Path(layout.group_replay_cache(project, name)).parent, ignore_errors=True)
    return status.status(project, name)


def _warm_status(project, name="g"):
    from rooms_cli.groups import status

    log.load_any(project, name)  # the read after a write brings both caches up to date
    loaded = []
    load_head = log.load_head

    def counting(project, name):
        group = load_head(project, name)
        loaded.append(len(group.broadcasts) if group is not None else 0)
        return group

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(log, "load_head", counting)
        info = status.status(project, name)
    return info, sum(loaded)


def test_status_from_the_head_cache_equals_a_full_replay_after_appends(project):
    _spawn(project)
    for n in range(log.HEAD_BROADCASTS + 5):
        _broadcast(project, n)
    # a broadcast left in flight long ago, then many closed ones after it: it is still the one in flight
    log.append(project, "g", log.event("broadcast", id="b-open", fields={}, members=MEMBERS, sender="me"), lock=True)
    for n in range(100, 100 + log.HEAD_BROADCASTS + 3):
        _broadcast(project, n)
    info, loaded = _warm_status(project)
    assert loaded <= log.HEAD_BROADCASTS + 2
    assert info["in_flight"]["broadcast_id"] == "b-open"
    assert info == _status_from_scratch(project)


def test_status_from_the_head_cache_equals_a_full_replay_after_an_interleaving_merge(project):
    path = _cached_log(project, broadcasts=30)
    _merge_in_middle(path, _stamped_after(path, 3, log.event("broadcast", id="b-other", fields={}, members=MEMBERS, sender="them")))
    from rooms_cli.groups import status

    merged = status.status(project, "g")  # the head no longer covers the log's bytes: a full replay
    assert merged["in_flight"]["broadcast_id"] == "b-other"
    assert merged == _status_from_scratch(project)
    assert _warm_status(project)[0] == merged


def test_a_warm_status_read_loads_as_many_broadcasts_for_1000_as_for_100(project):
    loaded = {}
    for name, count in (("medium", 100), ("big", 1000)):
        _spawn(project, name)
        events = []
        for n in range(count):
            bid = f"b-{n}"
            events += [log.event("broadcast", id=bid, fields={}, members=MEMBERS, sender="me"),
                       log.event("gathered", id=bid, result={"by_member": {}})]
        log.append(project, name, *events, lock=True)
        _, loaded[name] = _warm_status(project, name)
    assert loaded["big"] == loaded["medium"] == log.HEAD_BROADCASTS
