"""The file store: atomic replace, JSONL logs, locks, ids, clock, randomness."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import rooms_env
from hypothesis import given, settings
from hypothesis import strategies as st

from rooms_cli.core.errors import InvalidInput, LockBusy, NotFound
from rooms_cli.store import atomic, jsonl
from rooms_cli.store.clock import iso, now, parse_duration, parse_time
from rooms_cli.store.ids import NAME_RE, new_id, resolve_prefix, validate_name
from rooms_cli.store.locks import locked
from rooms_cli.store.paths import find_project, init_project, open_project
from rooms_cli.store.rand import rng, stable_random

# ---------------------------------------------------------------- ids


@pytest.mark.parametrize("bad", ["../x", "a/b", "", "A", "x" * 65, "a\x00b", "a\nb", "-x", ".x", "..", "a..b", " a", "é"])
def test_id_validation_refuses_unsafe_names(bad):
    with pytest.raises(InvalidInput):
        validate_name(bad)


@pytest.mark.parametrize("good", ["a", "researcher", "agent-2", "x.y_z", "0", "a" * 64])
def test_id_validation_accepts_names(good):
    assert validate_name(good) == good


@given(st.text(max_size=80))
def test_validate_name_accepts_exactly_the_documented_pattern(text):
    ok = bool(NAME_RE.fullmatch(text)) and ".." not in text
    try:
        validate_name(text)
        assert ok
    except InvalidInput:
        assert not ok


def test_new_ids_are_unique_sorted_and_prefixed():
    ids = [new_id("m") for _ in range(2000)]
    assert len(set(ids)) == 2000
    assert ids == sorted(ids)
    assert all(i.startswith("m-") and len(i) == 28 for i in ids)


def test_new_ids_stay_ordered_under_a_frozen_clock(monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", "2026-01-01T00:00:00Z")
    ids = [new_id("t") for _ in range(500)]
    assert ids == sorted(ids) and len(set(ids)) == 500


def test_ids_from_seeded_processes_never_collide(monkeypatch):
    code = "from rooms_cli.store.ids import new_id; print(new_id('m'))"
    env = rooms_env({"ROOMS_SEED": "7", "ROOMS_NOW": "2026-01-01T00:00:00Z"})
    outs = {subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True).stdout for _ in range(3)}
    assert len(outs) == 3


def test_unique_prefix_resolves_like_git():
    ids = ["t-01AAA", "t-01ABB", "t-02CCC"]
    assert resolve_prefix("t-02", ids) == "t-02CCC"
    assert resolve_prefix("01ab", ids) == "t-01ABB"  # kind prefix and case are optional
    with pytest.raises(InvalidInput, match="ambiguous"):
        resolve_prefix("t-01A", ids)
    with pytest.raises(NotFound):
        resolve_prefix("t-09", ids)


@given(st.lists(st.text(alphabet="0123456789ABCDEFGHJKMNPQRSTVWXYZ", min_size=6, max_size=12), min_size=1, max_size=20, unique=True))
def test_every_full_id_resolves_to_itself(bodies):
    ids = [f"t-{b}" for b in bodies]
    for full in ids:
        assert resolve_prefix(full, ids) == full


# ---------------------------------------------------------------- clock and chance


def test_rooms_now_overrides_the_clock(monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", "2026-03-04T05:06:07Z")
    assert iso(now()) == "2026-03-04T05:06:07.000Z"


def test_bad_rooms_now_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", "yesterday")
    with pytest.raises(InvalidInput, match="ROOMS_NOW"):
        now()


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("90s", 90), ("15m", 900), ("1h30m", 5400), ("2d", 172800), ("250ms", 0.25)])
def test_durations_parse(text, seconds):
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("bad", ["", "-5", "5x", "m", "1h-", "nan", "inf"])
def test_bad_durations_are_refused(bad):
    with pytest.raises(InvalidInput):
        parse_duration(bad)


@given(st.datetimes(max_value=__import__("datetime").datetime(8999, 12, 31), timezones=st.just(__import__("datetime").UTC)))
def test_iso_round_trip_to_the_millisecond(moment):
    again = parse_time(iso(moment))
    assert abs((again - moment).total_seconds()) < 0.001


def test_a_stamp_far_ahead_of_the_clock_is_ordered_but_not_followed(tmp_path, monkeypatch):
    """Item 6 of issue 38: one line stamped at the end of time made every later append overflow; a stamp
    more than MAX_SKEW_S ahead is read and ordered like any other, but the clock does not jump to it."""
    from rooms_cli.store import clock

    monkeypatch.setattr(clock, "_hlc_last", (0, -1))  # this process's clock afresh (an earlier test's future stamps)
    log = tmp_path / "inbox.jsonl"
    jsonl.append(log, {"id": "a"})
    with open(log, "ab") as handle:
        handle.write(b'{"id": "end-of-time", "hlc": "9999-12-31T23:59:59.999Z-9999-ffffff"}\n')
    mine = [jsonl.append(log, {"id": f"m{n}"}) for n in range(3)]
    assert all(r["hlc"] < "2999" for r in mine) and mine[0]["hlc"] < mine[1]["hlc"] < mine[2]["hlc"]
    assert [r["id"] for r in jsonl.read_ordered(log)] == ["a", "m0", "m1", "m2", "end-of-time"]
    assert clock.future_stamp("9999-12-31T23:59:59.999Z-9999-ffffff") is not None
    assert clock.future_stamp(clock.hlc_stamp()) is None


def test_a_time_from_the_year_9000_on_is_refused_so_no_duration_added_to_it_overflows():
    with pytest.raises(InvalidInput, match="before the year 9000"):
        parse_time("9999-12-31T23:00:00Z")


def test_rooms_seed_fixes_random_choices(monkeypatch):
    monkeypatch.setenv("ROOMS_SEED", "42")
    a = [rng("speakers").random() for _ in range(3)]
    b = [rng("speakers").random() for _ in range(3)]
    assert a == b
    assert rng("speakers").random() != rng("other").random()
    assert stable_random("slot", "2026-01-01") == stable_random("slot", "2026-01-01")


# ---------------------------------------------------------------- discovery and paths


def test_discovery_finds_the_nearest_rooms_dir_upwards(tmp_path, monkeypatch):
    init_project(tmp_path)
    deep = tmp_path / "a" / "b"
    deep.mkdir(parents=True)
    assert find_project(deep).root == str(tmp_path)


def test_rooms_dir_env_overrides_discovery(tmp_path, monkeypatch):
    other = tmp_path / "other"
    init_project(other)
    monkeypatch.setenv("ROOMS_DIR", str(other / ".rooms"))
    assert open_project(start=tmp_path).root == str(other)


def test_missing_project_says_run_rooms_init(tmp_path):
    from rooms_cli.core.errors import NotInitialized

    with pytest.raises(NotInitialized, match="rooms init"):
        open_project(start=tmp_path)


def test_paths_never_escape_rooms_dir_even_through_symlinks(tmp_path):
    project, _ = init_project(tmp_path)
    with pytest.raises(InvalidInput):
        project.path("rooms", "../../etc")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside, Path(project.dir) / "rooms" / "evil")
    with pytest.raises(InvalidInput, match="outside"):
        project.path("rooms", "evil", "transcript.jsonl")


def test_paths_check_only_the_segments_yet_refuse_what_the_full_resolve_refuses(tmp_path):
    """Project.path lstats the segments instead of resolving both paths from / (a hot path: an MCP send
    built ten): a link at any depth that leads out is refused, one that stays inside is taken, and a
    .rooms/ reached through a symlinked parent works as before."""
    project, _ = init_project(tmp_path / "real")
    outside = tmp_path / "outside"
    outside.mkdir()
    (Path(project.dir) / "inbox").mkdir(exist_ok=True)
    os.symlink(outside / "x.jsonl", Path(project.dir) / "inbox" / "bob.jsonl")  # the last segment, dangling
    with pytest.raises(InvalidInput, match="outside"):
        project.path("inbox", "bob.jsonl")
    os.symlink(Path(project.dir) / "inbox", Path(project.dir) / "rooms" / "alias")  # a link that stays inside
    assert project.path("rooms", "alias", "carol.jsonl") == str(Path(project.dir) / "rooms" / "alias" / "carol.jsonl")
    os.symlink(tmp_path / "real", tmp_path / "via")  # the project itself through a symlink
    linked, _ = init_project(tmp_path / "via")
    assert linked.path("rooms", "default", "log.jsonl") == str(tmp_path / "via" / ".rooms" / "rooms" / "default" / "log.jsonl")
    assert Path(project.path("rooms", "nothing", "here", "yet.jsonl")).parent.name == "here"  # missing parts are no links


def test_within_one_operation_a_folder_is_checked_once_and_every_operation_checks_again(tmp_path, monkeypatch):
    """An MCP call runs as one operation (paths.one_operation): a folder found not to be a symlink is not
    lstat'ed again inside it, but the next operation, and any path built outside one, checks it anew:
    a symlink planted between two calls (a git pull) is refused."""
    from rooms_cli.store import paths

    project, _ = init_project(tmp_path)
    (Path(project.dir) / "rooms" / "default").mkdir(parents=True, exist_ok=True)
    for name in ("a.jsonl", "b.jsonl"):
        (Path(project.dir) / "rooms" / "default" / name).write_text("")
    seen: list[str] = []
    lstat = os.lstat
    monkeypatch.setattr(paths.os, "lstat", lambda p: (seen.append(str(p)), lstat(p))[1])
    with paths.one_operation():
        for name in ("a.jsonl", "b.jsonl", "a.jsonl"):
            project.path("rooms", "default", name)
    folder = str(Path(project.dir) / "rooms" / "default")
    assert seen.count(folder) == 1 and seen.count(folder + "/a.jsonl") == 1
    seen.clear()
    project.path("rooms", "default", "a.jsonl")
    project.path("rooms", "default", "a.jsonl")
    assert seen.count(folder) == 2  # outside an operation: every time
    outside = tmp_path / "outside"
    outside.mkdir()
    (Path(project.dir) / "rooms" / "default").rename(Path(project.dir) / "rooms" / "moved")
    os.symlink(outside, Path(project.dir) / "rooms" / "default")  # planted between two operations
    with paths.one_operation(), pytest.raises(InvalidInput, match="outside"):
        project.path("rooms", "default", "a.jsonl")
    assert not paths._CHECKED  # nothing is left behind once an operation ends


# ---------------------------------------------------------------- atomic replace


WRITER = textwrap.dedent(
    """
    import sys
    from rooms_cli.store import atomic
    path = sys.argv[1]
    i = 0
    while True:
        i += 1
        body = (f"version {i}\\n" * 2000).encode()
        atomic.write_bytes(path, body)
    """
)


@pytest.mark.slow
def test_atomic_replace_survives_kill_9_at_random_moments(tmp_path):
    target = tmp_path / "state.txt"
    atomic.write_bytes(target, b"version 0\n" * 2000)
    rounds = 25
    for _ in range(rounds):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], env=rooms_env())
        time.sleep(random.uniform(0.15, 0.45))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        data = target.read_bytes()
        lines = data.decode().splitlines()
        # always one whole version: 2000 identical lines
        assert len(lines) == 2000 and len(set(lines)) == 1, "a reader saw a mix of two versions"
    leftovers = [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert len(leftovers) <= rounds  # temp files of killed writers are ignored by readers and git


def test_read_json_refuses_an_unreadable_file_instead_of_resetting_it(tmp_path):
    from rooms_cli.core.errors import InvalidData

    bad = tmp_path / "x.json"
    bad.write_text("{not json")
    with pytest.raises(InvalidData, match="not valid JSON"):
        atomic.read_json(bad, default={})
    assert bad.read_text() == "{not json"


# ---------------------------------------------------------------- JSONL


APPENDER = textwrap.dedent(
    """
    import sys
    from rooms_cli.store import jsonl
    path, who, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    for i in range(count):
        jsonl.append(path, {"who": who, "i": i, "pad": "x" * (i % 7) * 300})
    """
)


def test_concurrent_appenders_lose_no_line_and_interleave_none(tmp_path):
    log = tmp_path / "log.jsonl"
    procs = [
        subprocess.Popen([sys.executable, "-c", APPENDER, str(log), f"w{n}", "150"], env=rooms_env()) for n in range(6)
    ]
    for p in procs:
        assert p.wait(timeout=120) == 0
    scan = jsonl.scan(log)
    assert not scan.bad and not scan.torn
    assert len(scan.records) == 900
    for n in range(6):
        mine = [r["i"] for r in scan.records if r["who"] == f"w{n}"]
        assert mine == list(range(150))  # each writer's lines whole and in its order


def test_torn_last_line_is_skipped_with_a_warning_and_the_rest_read(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"a": 1}\n{"a": 2}\n{"a": 3, "b"')
    assert jsonl.read(log) == [{"a": 1}, {"a": 2}]
    # the unfinished line is never glued to the next append
    jsonl.append(log, {"a": 4})
    assert [{k: v for k, v in r.items() if k != "hlc"} for r in jsonl.read(log)] == [{"a": 1}, {"a": 2}, {"a": 4}]
    assert "unfinished" in capsys.readouterr().err


def test_a_last_line_that_parses_is_kept_and_the_next_append_finishes_it(tmp_path, capsys):
    """A hand edit (or a copy) that dropped the final newline of a whole record: the record is complete,
    so readers keep it and the next append adds the newline before its own line; nothing is removed."""
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"a": 1}\n{"a": 2}')
    scan = jsonl.scan(log)
    assert scan.records == [{"a": 1}, {"a": 2}] and scan.unfinished and not scan.torn
    jsonl.append(log, {"a": 3})
    assert [r["a"] for r in jsonl.read(log)] == [1, 2, 3]
    assert log.read_bytes().startswith(b'{"a": 1}\n{"a": 2}\n{"a": 3') and "removed" not in capsys.readouterr().err


def _durability_trace(monkeypatch) -> list[tuple[str, str]]:
    """What the store flushes and links from now on, in order: ("fsync", path of the fd), ("link", new name)."""
    trace: list[tuple[str, str]] = []
    fsync, link = os.fsync, os.link

    def spy_fsync(fd):
        trace.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        return fsync(fd)

    def spy_link(src, dst, *args, **kwargs):
        link(src, dst, *args, **kwargs)
        trace.append(("link", str(dst)))

    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(os, "link", spy_link)
    return trace


def test_a_new_log_is_on_disk_name_and_all_before_its_append_returns(tmp_path, monkeypatch):
    """SIGKILL loses nothing the kernel holds; a power cut loses what was not flushed. A new log is a new
    name (a hard link is an entry of its folder): its folder is flushed after the link, and each folder
    made for it is flushed into its parent, before the append returns (the command acknowledges)."""
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc to name an fd")
    trace = _durability_trace(monkeypatch)
    log = tmp_path / "new" / "deeper" / "log.jsonl"
    jsonl.append(log, {"a": 1})
    linked = trace.index(("link", str(log)))
    assert any(op == "fsync" and path.endswith(".tmp") for op, path in trace[:linked]), "its bytes before its name"
    flushed = [path for op, path in trace[linked:] if op == "fsync"]
    assert str(log.parent) in flushed, trace
    assert {str(tmp_path), str(tmp_path / "new")} <= {path for op, path in trace if op == "fsync"}, trace
    trace.clear()
    jsonl.append(log, {"a": 2})  # an append to a log that exists: its bytes, no folder
    assert trace == [("fsync", str(log))]


def test_files_made_together_are_whole_under_their_names_or_not_made(tmp_path):
    """`files.create_all` (a board import) links each file whole: a kill leaves no empty file under a
    name; an error (a name taken) removes every file it made and leaves no temp file."""
    from rooms_cli.store import files

    files.create_all([(str(tmp_path / "a.jsonl"), b'{"a": 1}\n'), (str(tmp_path / "b.jsonl"), b'{"b": 2}\n')])
    assert sorted(os.listdir(tmp_path)) == ["a.jsonl", "b.jsonl"]
    with pytest.raises(FileExistsError) as taken:
        files.create_all([(str(tmp_path / "c.jsonl"), b'{"c": 3}\n'), (str(tmp_path / "a.jsonl"), b'{"x": 0}\n')])
    assert taken.value.filename == str(tmp_path / "a.jsonl")
    assert sorted(os.listdir(tmp_path)) == ["a.jsonl", "b.jsonl"] and (tmp_path / "a.jsonl").read_bytes() == b'{"a": 1}\n'


def test_a_corrupt_middle_line_is_reported_by_file_and_line_and_skipped(tmp_path, capsys):
    log = tmp_path / "log.jsonl"
    log.write_bytes(b'{"a": 1}\nnot json\n[1, 2]\n{"a": 2}\n')
    assert jsonl.read(log) == [{"a": 1}, {"a": 2}]
    err = capsys.readouterr().err
    assert f"{log}: line 2" in err and f"{log}: line 3" in err
    jsonl.read(log)
    assert capsys.readouterr().err == ""  # reported once per process


def test_tail_reads_the_last_records_without_the_whole_file(tmp_path):
    log = tmp_path / "log.jsonl"
    jsonl.append_many(log, [{"i": i, "pad": "y" * 200} for i in range(5000)])
    assert [r["i"] for r in jsonl.tail(log, 3)] == [4997, 4998, 4999]
    assert len(jsonl.tail(log, 10_000)) == 5000


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.text(max_size=10), json_values, max_size=5), max_size=8))
def test_jsonl_round_trip_any_records(tmp_path_factory, records):
    log = tmp_path_factory.mktemp("j") / "log.jsonl"
    records = [{k: v for k, v in r.items() if k != "hlc"} for r in records]
    written = jsonl.append_many(log, records)
    read = jsonl.read(log)
    assert read == json.loads(json.dumps(written))
    # every record as given, plus its stamp; the stamps grow in file order
    assert [{k: v for k, v in r.items() if k != "hlc"} for r in read] == json.loads(json.dumps(records))
    stamps = [r["hlc"] for r in read]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)


@settings(max_examples=80, deadline=None)
@given(st.binary(max_size=400))
def test_jsonl_parser_never_crashes_and_keeps_good_lines(data):
    good = b'{"ok": 1}\n'
    scan = jsonl.parse_bytes(good + data.replace(b"\n", b" ") + b"\n" + good)
    assert scan.records[0] == {"ok": 1} and scan.records[-1] == {"ok": 1}


# ---------------------------------------------------------------- locks


HOLDER = textwrap.dedent(
    """
    import sys, time
    from rooms_cli.store.locks import locked
    with locked(sys.argv[1]):
        print("held", flush=True)
        time.sleep(30)
    """
)


def test_a_busy_lock_fails_with_lock_busy_not_a_hang(tmp_path):
    target = tmp_path / "room.yaml"
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(target)], stdout=subprocess.PIPE, text=True, env=rooms_env())
    try:
        assert proc.stdout.readline().strip() == "held"
        start = time.monotonic()
        with pytest.raises(LockBusy) as info:
            with locked(target, timeout=0.5):
                pass
        assert time.monotonic() - start < 5
        assert info.value.exit_code == 3
    finally:
        proc.kill()
        proc.wait()
    with locked(target, timeout=5):  # the kernel released it with the dead holder
        pass


def _conflicted(side: str) -> bytes:
    return (f'<<<<<<< HEAD\n{{"a": "{side}"}}\n=======\n{{"a": "theirs"}}\n>>>>>>> theirs\n').encode()


def test_an_appender_that_knows_a_log_still_sees_what_others_did_to_it(tmp_path):
    """A process appending again checks only what follows its own last append (jsonl._known_end), and
    only while the file is the one it appended to: markers appended after it, markers written into the
    middle of the file in place, a file replaced and a newer stamp appended by another process are all
    seen as a first append would see them."""
    from rooms_cli.core.errors import MergeConflict
    from rooms_cli.store import clock

    log = tmp_path / "log.jsonl"
    for n in range(50):
        jsonl.append(log, {"n": n})
    with open(log, "ab") as handle:  # another party appends an unresolved merge
        handle.write(_conflicted("tail"))
    with pytest.raises(MergeConflict):
        jsonl.append(log, {"n": "after the markers"})

    log.write_bytes(b"")
    for n in range(50):
        jsonl.append(log, {"n": n})
    with open(log, "r+b") as handle:  # rewritten in place: the same inode and length, markers in the middle
        data = handle.read()
        middle = data.index(b"\n", len(data) // 2) + 1
        marked = _conflicted("middle")
        handle.seek(middle)
        handle.write(marked + data[middle + len(marked):])
    assert log.stat().st_size == len(data)
    with pytest.raises(MergeConflict):
        jsonl.append(log, {"n": "after the rewrite"})

    other = tmp_path / "other.jsonl"
    for n in range(3):
        jsonl.append(other, {"n": n})
    from datetime import timedelta

    future = clock.iso(clock.now() + timedelta(minutes=30)) + "-0000-000001"
    with open(other, "ab") as handle:  # another clone's stamp, ahead of this clock within the allowed skew
        handle.write(json.dumps({"n": "theirs", "hlc": future}).encode() + b"\n")
    assert jsonl.append(other, {"n": "mine"})["hlc"] > future
    replaced = tmp_path / "replaced.jsonl"
    replaced.write_bytes(_conflicted("replaced"))
    os.replace(replaced, other)  # another inode: read as new
    with pytest.raises(MergeConflict):
        jsonl.append(other, {"n": "after the replace"})
    assert clock.hlc_stamp() > future
