"""The schedule and `rooms tick`: once per slot per day, probabilities, catch-up, UTC, dry runs."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
import yaml
from conftest import checkout_path
from hypothesis import given
from hypothesis import strategies as st

from rooms_cli.core.errors import InvalidData
from rooms_cli.project.config import Config, load_config
from rooms_cli.roundtable import queue, schedule
from rooms_cli.roundtable.orchestrator import RoundtableRequest
from rooms_cli.roundtable.tick import fire_schedule, run_pending
from rooms_cli.store import clock

REPO = Path(__file__).resolve().parent.parent


def write_config(project_dir: Path, slots: list[dict], **extra) -> None:
    (project_dir / ".rooms.yaml").write_text(yaml.safe_dump({"schedule": slots, **extra}))


def slot(name="standup", **kw) -> dict:
    base = {"name": name, "hour_utc": 6, "format": "debate", "participants": ["analyst", "hustler"], "probability": 1.0,
            "pace": 0}
    return {**base, **kw}


def fire_at(monkeypatch, project, when: str) -> list[dict]:
    monkeypatch.setenv("ROOMS_NOW", when)
    return fire_schedule(project, load_config(project))


def fired(actions):
    return [a for a in actions if a["action"] == "fire"]


def test_a_slot_fires_once_per_day_across_repeated_ticks(monkeypatch, project, project_dir):
    write_config(project_dir, [slot()])
    assert fire_at(monkeypatch, project, "2026-11-21T05:59:00Z") == []  # not yet
    assert len(fired(fire_at(monkeypatch, project, "2026-11-21T06:00:00Z"))) == 1
    for when in ("2026-11-21T06:05:00Z", "2026-11-21T06:30:00Z", "2026-11-21T06:59:00Z"):
        assert fire_at(monkeypatch, project, when) == []
    assert len(fired(fire_at(monkeypatch, project, "2026-11-22T06:10:00Z"))) == 1  # the next day, again
    items = queue.list_items(project)
    assert [i.key for i in items] == ["standup@2026-11-21", "standup@2026-11-22"]
    assert all(i.status == "pending" and i.by == "schedule" for i in items)


def _tick_proc(project_dir: Path, now: str) -> subprocess.Popen:
    env = {"PATH": "/usr/bin:/bin", "ROOMS_DIR": str(project_dir), "ROOMS_NOW": now, "PYTHONPATH": checkout_path(),
           "ROOMS_LOCK_TIMEOUT": "60", "USER": "tester"}
    return subprocess.Popen([sys.executable, "-m", "rooms_cli", "tick", "--json"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_concurrent_tick_processes_fire_a_slot_and_run_its_roundtable_once(project, project_dir):
    write_config(project_dir, [slot(), slot("coffee", hour_utc=5, minute=30, format="watercooler")])
    procs = [_tick_proc(project_dir, "2026-11-21T06:05:00Z") for _ in range(4)]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        reports.append(json.loads(out))
    fires = [a for r in reports for a in r["steps"].get("schedule", []) if a["action"] == "fire"]
    runs = [a for r in reports for a in r["steps"].get("roundtables", []) if a["action"] == "run"]
    assert len(fires) == 2 and len(runs) == 2  # each slot once, each roundtable once
    items = queue.list_items(project)
    assert sorted(i.key for i in items) == ["coffee@2026-11-21", "standup@2026-11-21"]
    assert all(i.status == "done" and i.attempts == 1 for i in items)
    rooms = sorted(p.name for p in (project_dir / ".rooms" / "rooms").iterdir() if p.name.startswith("roundtable-"))
    assert len(rooms) == 2
    # and a later tick the same day does nothing more
    again = _tick_proc(project_dir, "2026-11-21T06:40:00Z")
    out, _ = again.communicate(timeout=120)
    assert json.loads(out)["steps"]["schedule"] == []


def test_probability_zero_never_fires_and_one_always_does(monkeypatch, project, project_dir):
    write_config(project_dir, [slot("never", probability=0), slot("always", hour_utc=7, probability=1)])
    wins = {"never": 0, "always": 0}
    for day in range(1, 31):
        for action in fire_at(monkeypatch, project, f"2026-12-{day:02d}T07:10:00Z"):
            wins[action["detail"].split(" ")[0]] += action["action"] == "fire"
    assert wins == {"never": 0, "always": 30}


def test_the_roll_is_deterministic_for_slot_and_date(monkeypatch, project, project_dir):
    write_config(project_dir, [slot("maybe", probability=0.5)])
    days = [f"2026-10-{d:02d}T06:10:00Z" for d in range(1, 29)]
    first = [bool(fired(fire_at(monkeypatch, project, d))) for d in days]
    (project_dir / ".rooms" / "schedule" / "fired.jsonl").unlink()
    (project_dir / ".rooms" / "roundtables" / "queue.jsonl").unlink()
    second = [bool(fired(fire_at(monkeypatch, project, d))) for d in days]
    assert first == second
    assert 5 <= sum(first) <= 23  # about half
    expected = [schedule.stable_random("schedule", "maybe", d[:10]) < 0.5 for d in days]
    assert first == expected


def test_catch_up_window_is_honoured(monkeypatch, project, project_dir, cli):
    write_config(project_dir, [slot()])
    assert len(fired(fire_at(monkeypatch, project, "2026-11-21T07:00:00Z"))) == 1  # exactly 1h late: still fires
    assert fire_at(monkeypatch, project, "2026-11-22T07:00:01Z") == []  # 1h and a second late: missed
    monkeypatch.setenv("ROOMS_NOW", "2026-11-22T07:00:01Z")
    rows = cli("schedule", "--json").json()
    assert rows[0]["today"][0]["status"] == "missed" and rows[0]["next"] == "2026-11-23T06:00:00.000Z"
    write_config(project_dir, [slot()], catch_up="3h")
    assert len(fired(fire_at(monkeypatch, project, "2026-11-23T08:59:00Z"))) == 1


def test_catch_up_reaches_across_midnight(monkeypatch, project, project_dir):
    write_config(project_dir, [slot("late", hour_utc=23, minute=50)])
    actions = fire_at(monkeypatch, project, "2026-11-22T00:20:00Z")
    assert len(fired(actions)) == 1 and "2026-11-21" in actions[0]["detail"]


def test_times_are_utc_whatever_the_offset_or_local_zone(monkeypatch, project, project_dir, rooms):
    write_config(project_dir, [slot()])
    # 07:05 in Berlin on the day daylight saving ends is 06:05 UTC
    assert len(fired(fire_at(monkeypatch, project, "2026-10-25T07:05:00+01:00"))) == 1
    # New York, the day daylight saving ends: 01:30-05:00 is 06:30 UTC, the same day: no second firing
    env = {"TZ": "America/New_York", "ROOMS_NOW": "2026-11-01T01:05:00-05:00"}
    first = rooms("tick", "--json", env=env).json()
    again = rooms("tick", "--json", env={**env, "ROOMS_NOW": "2026-11-01T01:30:00-05:00"}).json()
    assert len(fired(first["steps"]["schedule"])) == 1 and again["steps"]["schedule"] == []
    assert set(schedule.read_state(project).fired["standup"]) == {"2026-10-25", "2026-11-01"}


def test_a_cron_slot_fires_at_each_matching_time(monkeypatch, project, project_dir):
    write_config(project_dir, [{"name": "twice", "cron": "0,30 9 * * 1-5", "format": "watercooler",
                                "participants": ["random:2"], "probability": 1, "pace": 0}])
    assert len(fired(fire_at(monkeypatch, project, "2026-11-20T09:00:00Z"))) == 1  # Friday
    assert len(fired(fire_at(monkeypatch, project, "2026-11-20T09:31:00Z"))) == 1
    assert fire_at(monkeypatch, project, "2026-11-20T09:45:00Z") == []
    assert fire_at(monkeypatch, project, "2026-11-21T09:05:00Z") == []  # Saturday
    keys = [i.key for i in queue.list_items(project)]
    assert keys == ["twice@2026-11-20T09:00", "twice@2026-11-20T09:30"]
    # a tick that finds both times of a day due fires once, for the latest
    (project_dir / ".rooms" / "schedule" / "fired.jsonl").unlink()
    assert [a["detail"].split(" ")[2] for a in fired(fire_at(monkeypatch, project, "2026-11-23T09:40:00Z"))] == \
        ["2026-11-23T09:30):"]
    monkeypatch.setenv("ROOMS_NOW", "2026-11-23T09:45:00Z")
    assert [t["status"] for t in schedule.today_status(project, load_config(project), clock.now())[0]["today"]] \
        == ["superseded", "won"]
    assert all(len(i.request.participants) == 2 for i in queue.list_items(project))


def test_cron_parsing():
    cron = schedule.Cron.parse("*/15 6-8 * * 0")
    assert [t.strftime("%H:%M") for t in cron.times_on(date(2026, 11, 22))][:5] == ["06:00", "06:15", "06:30", "06:45",
                                                                                    "07:00"]
    assert cron.times_on(date(2026, 11, 23)) == []
    assert schedule.Cron.parse("0 6 1 * 1").times_on(date(2026, 11, 30))  # dom OR dow (a Monday)
    with pytest.raises(InvalidData, match="5 fields"):
        schedule.Cron.parse("0 6 * *")
    with pytest.raises(InvalidData, match="is not a cron expression"):
        schedule.Cron.parse("0 24 * * *")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (slot(hour_utc=24), r"schedule\[0\] \(standup\).hour_utc must be a whole number from 0 to 23"),
        (slot(minute=60), r"minute must be a whole number from 0 to 59"),
        (slot(probability=1.5), r"probability must be a number from 0 to 1, found 1.5"),
        (slot(format="karaoke"), r"format names no format \('karaoke'\)"),
        (slot(cron="0 6 * * *"), r"has both cron and hour_utc/minute"),
        ({"name": "x", "format": "debate"}, r"needs hour_utc \(0–23\) or cron"),
        (slot(participants="boss"), r"participants must be a list"),
        (slot(name=""), r"schedule\[0\].name must be text"),
        (slot(pace=-1), r"pace must be a number of seconds ≥ 0, found -1"),
    ],
)
def test_bad_slots_are_clear_errors_naming_the_key(spec, message):
    with pytest.raises(InvalidData, match=message):
        schedule.load_slots(Config({"schedule": [spec]}))


def test_the_shipped_24_slot_day_is_valid():
    data = yaml.safe_load((REPO / "rooms_cli" / "data" / "examples" / "schedule.yaml").read_text())  # rooms schedule example
    slots = schedule.load_slots(Config(data))
    assert len(slots) == 24
    assert {s.hour if s.cron is None else s.cron.times_on(date(2026, 11, 22))[0].hour for s in slots} == set(range(24))
    standup = next(s for s in slots if s.id == "morning-standup")
    assert standup.name == "Morning Standup"  # a display name; the id is derived
    assert standup.pace == 3.0  # scheduled roundtables keep the source's human-like gaps
    assert standup.probability == 1.0 and all(0.4 <= s.probability <= 1 for s in slots)
    assert "rooms tick" in (REPO / "examples" / "schedule" / "crontab").read_text()


def test_a_slot_that_cannot_run_is_recorded_once_not_retried_every_tick(monkeypatch, project, project_dir):
    write_config(project_dir, [slot(format="standup", participants=["random:30"])])
    actions = fire_at(monkeypatch, project, "2026-11-21T06:05:00Z")
    assert actions[0]["action"] == "skip" and "cannot draw 30 more agents" in actions[0]["detail"]
    assert fire_at(monkeypatch, project, "2026-11-21T06:10:00Z") == []


def _tree(root: Path) -> dict:
    """Every file's digest and every entry's mtime, but the parsed-YAML cache any read may keep
    (.rooms/run/parsed.json, store/parsed.py, as hardening_kit.snapshot leaves out): it is kept only
    once the files are RACY_S old, so whether a read writes it depends on how loaded the machine is."""
    run = root / ".rooms" / "run"
    return {str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                                       None if p == run else p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p != run / "parsed.json"}


def test_dry_run_writes_nothing(monkeypatch, project, project_dir, rooms):
    write_config(project_dir, [slot(), slot("coffee", minute=1, format="watercooler", probability=0)])
    queue.enqueue(project, RoundtableRequest("debate", participants=["analyst", "boss"], turns=2, force=True))
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    queue.enqueue(project, RoundtableRequest("watercooler", turns=2, force=True))
    claimed = queue.claim_next(project)
    lines = Path(queue.queue_path(project)).read_text().splitlines()
    lines[-1] = lines[-1].replace(f'"pid": {claimed.runner["pid"]}', f'"pid": {int(dead.stdout)}')
    Path(queue.queue_path(project)).write_text("\n".join(lines) + "\n")
    before = _tree(project_dir)
    run = rooms("tick", "--dry-run", env={"ROOMS_NOW": "2026-11-21T06:05:00Z"})
    assert run.exit_code == 0, run.stderr
    assert _tree(project_dir) == before
    assert "schedule: would fire standup" in run.stdout and "would skip coffee" in run.stdout
    assert "roundtables: would retry" in run.stdout and run.stdout.count("roundtables: would run") == 1
    # the same tick for real does all of it
    real = rooms("tick", "--json", env={"ROOMS_NOW": "2026-11-21T06:05:00Z"}).json()
    assert [a["action"] for a in real["steps"]["roundtables"]] == ["retry", "run", "run", "run"]


def test_schedule_command_shows_todays_rolls_and_next_fire(monkeypatch, project, project_dir, cli):
    write_config(project_dir, [slot(), slot("never", hour_utc=5, probability=0), slot("later", hour_utc=20)])
    fire_at(monkeypatch, project, "2026-11-21T06:10:00Z")
    rows = {r["name"]: r for r in cli("schedule", "--json").json()}
    assert rows["standup"]["today"][0]["status"] == "won"
    assert rows["never"]["today"][0]["status"] == "missed"  # 05:00 + 1h < 06:10, never rolled
    assert rows["later"]["today"][0]["status"] == "upcoming" and rows["later"]["next"] == "2026-11-21T20:00:00.000Z"
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T05:30:00Z")
    human = cli("schedule").stdout
    assert "never" in human and "p=0" in human
    fire_at(monkeypatch, project, "2026-11-21T05:30:00Z")
    assert {r["name"]: r for r in cli("schedule", "--json").json()}["never"]["today"][0]["status"] == "lost"


def test_run_pending_with_nothing_queued_does_nothing(project):
    assert run_pending(project, load_config(project)) == []



@given(st.lists(st.sampled_from(["*", "*/5", "0", "7", "1-5", "0,30", "59", "24", "x", "5-1", "*/0", "3/2"]),
                min_size=4, max_size=6))
def test_any_cron_text_parses_or_is_a_clear_error(fields):
    try:
        cron = schedule.Cron.parse(" ".join(fields))
    except InvalidData as err:
        assert str(err).startswith(".rooms.yaml: cron")
    else:
        assert all(t.tzinfo is not None for t in cron.times_on(date(2026, 11, 22)))


def test_a_dry_run_names_the_participants_the_real_tick_draws(monkeypatch, project, project_dir):
    write_config(project_dir, [slot(participants=["random:2"])])
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:05:00Z")
    config = load_config(project)
    would = [fire_schedule(project, config, dry_run=True)[0]["detail"] for _ in range(5)]
    did = fire_schedule(project, config)[0]["detail"]
    assert len(set(would)) == 1 and did.startswith(would[0] + " → q-")


def test_scheduled_roundtables_keep_human_like_gaps_unless_the_slot_says_otherwise(monkeypatch, project, project_dir):
    plain = slot("plain")
    del plain["pace"]
    write_config(project_dir, [plain, slot("quick", pace=0.5)])
    fire_at(monkeypatch, project, "2026-11-21T06:05:00Z")
    assert {i.key.split("@")[0]: i.request.pace for i in queue.list_items(project)} == {"plain": 3.0, "quick": 0.5}
