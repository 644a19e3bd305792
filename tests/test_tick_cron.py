"""`rooms tick` under cron: a crontab line that works as cron runs it, an exit status that tells cron a
step failed, failed roundtables retried with backoff, slots with display names and real cron lines,
scheduled roundtables that leave no live room behind."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from datetime import date
from pathlib import Path

import pytest
import yaml

from rooms_cli.core.errors import InvalidData
from rooms_cli.project.config import Config, load_config
from rooms_cli.roundtable import queue, schedule
from rooms_cli.roundtable.orchestrator import RoundtableRequest
from rooms_cli.roundtable.tick import fire_schedule, run_pending

REPO = Path(__file__).resolve().parent.parent
ROOMS_SCRIPT = Path(sys.executable).parent / "rooms"


def as_cron_runs_it(line: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run a crontab line's command the way cron does: bare environment, PATH=/usr/bin:/bin, sh -c."""
    command = line.split(None, 5)[5].replace("\\%", "%")
    return subprocess.run(["env", "-i", "PATH=/usr/bin:/bin", "sh", "-c", command], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def down_provider(project_dir: Path, agents: list[str], **config) -> None:
    """Give `agents` a provider whose server is not there (connection refused on a closed port)."""
    config = {"providers": {"down": {"type": "openai", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0}},
              **config}
    (project_dir / ".rooms.yaml").write_text(yaml.safe_dump(config))
    for agent in agents:
        path = project_dir / ".rooms" / "agents" / f"{agent}.md"
        text = path.read_text()
        path.write_text(text.replace("---\n", "---\nmodel: down:m\n", 1) if "\nmodel:" not in text else text)


# ---- the crontab line ------------------------------------------------------------------------------------

def test_init_creates_the_run_directory_the_crontab_line_logs_into(tmp_path, cli):
    assert cli("init", str(tmp_path / "p")).exit_code == 0
    assert (tmp_path / "p" / ".rooms" / "run").is_dir()


@pytest.mark.skipif(not ROOMS_SCRIPT.exists(), reason="needs the installed rooms console script")
def test_the_crontab_line_runs_tick_as_cron_would_from_another_directory(tmp_path):
    project = tmp_path / "my project"  # a space: the line quotes its paths
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROOMS_")}
    subprocess.run([str(ROOMS_SCRIPT), "init", str(project)], check=True, capture_output=True, env=env)
    line = subprocess.run([str(ROOMS_SCRIPT), "schedule", "crontab"], cwd=project, capture_output=True, text=True,
                          env=env, check=True).stdout.strip()
    assert line.startswith("*/5 * * * * cd ") and shlex.quote(str(ROOMS_SCRIPT)) in line
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = as_cron_runs_it(line, elsewhere)
    assert run.returncode == 0, run.stderr
    assert (project / ".rooms" / "run" / "tick.log").read_text() == ""  # an idle tick logs nothing


def test_the_crontab_line_from_python_m_names_this_python(tmp_path, rooms, project_dir):
    line = rooms("schedule", "crontab", "--every", "10", cwd=project_dir).stdout.strip()
    assert line.startswith("*/10 * * * * ") and f"{sys.executable} -m rooms_cli tick" in line
    assert (project_dir / ".rooms" / "run" / "tick.log").exists()
    run = as_cron_runs_it(line, tmp_path)
    assert run.returncode == 0, run.stderr


def test_the_schedule_example_uses_the_crontab_command():
    readme = (REPO / "examples" / "schedule" / "README.md").read_text()
    assert "rooms schedule crontab" in readme
    assert "rooms schedule crontab" in (REPO / "examples" / "schedule" / "crontab").read_text()


# ---- tick's exit status ----------------------------------------------------------------------------------

def test_tick_runs_every_step_then_exits_1_with_one_stderr_line_per_failed_step(project_dir, project, cli):
    (project_dir / ".rooms.yaml").write_text(yaml.safe_dump({"schedule": [{"name": "x", "hour_utc": 99,
                                                                           "format": "debate"}]}))
    queue.enqueue(project, RoundtableRequest("watercooler", participants=["analyst", "boss"], turns=2, force=True))
    run = cli("tick", env={"ROOMS_NOW": "2026-11-21T06:05:00Z"})
    assert run.exit_code == 1
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: tick step schedule failed: .rooms.yaml: schedule[0] (x).hour_utc must be a whole "
                      "number from 0 to 23, found 99"]
    assert "roundtables: run" in run.stdout and "turns in room" in run.stdout  # the later step still ran
    doc = cli("tick", "--json", env={"ROOMS_NOW": "2026-11-21T06:10:00Z"})
    assert doc.exit_code == 1 and doc.json()["ok"] is False and doc.json()["failed"][0]["step"] == "schedule"


def test_a_roundtable_whose_provider_is_down_fails_the_tick(project_dir, project, cli):
    down_provider(project_dir, ["analyst", "hustler"])
    queue.enqueue(project, RoundtableRequest("debate", participants=["analyst", "hustler"], turns=2, force=True))
    run = cli("tick", env={"ROOMS_NOW": "2026-11-21T06:05:00Z"})
    assert run.exit_code == 1
    assert run.stderr.count("error: tick step roundtables failed:") == 1 and "127.0.0.1:9" in run.stderr


def test_a_tick_with_nothing_failing_exits_0(project, cli):
    run = cli("tick", env={"ROOMS_NOW": "2026-11-21T06:05:00Z"})
    assert run.exit_code == 0 and run.stderr == ""


# ---- retries ---------------------------------------------------------------------------------------------

def test_a_failed_roundtable_is_retried_by_later_ticks_with_backoff_then_given_up(monkeypatch, project_dir, project):
    down_provider(project_dir, ["analyst", "hustler"])
    item, _ = queue.enqueue(project, RoundtableRequest("debate", participants=["analyst", "hustler"], turns=2, force=True))

    def tick_at(when: str) -> list[dict]:
        monkeypatch.setenv("ROOMS_NOW", when)
        return run_pending(project, load_config(project))

    first = tick_at("2026-11-21T06:00:00Z")
    assert "retry 2/3 after 2026-11-21T06:05:00.000Z" in first[0]["detail"] and first[0]["error"]
    assert queue.get_item(project, item.id).status == "pending"
    assert tick_at("2026-11-21T06:04:00Z") == []  # still backing off
    assert "retry 3/3 after 2026-11-21T06:25:00.000Z" in tick_at("2026-11-21T06:05:00Z")[0]["detail"]
    assert tick_at("2026-11-21T06:20:00Z") == []
    assert "gave up after 3 attempts" in tick_at("2026-11-21T06:25:00Z")[0]["detail"]
    final = queue.get_item(project, item.id)
    assert final.status == "failed" and final.attempts == 3 and "gave up after 3 attempts" in final.error
    assert tick_at("2026-11-21T07:00:00Z") == []  # bounded: no fourth attempt


def test_schedule_and_doctor_show_a_retrying_and_a_failed_roundtable(monkeypatch, project_dir, project, cli):
    down_provider(project_dir, ["analyst", "hustler"], schedule=[
        {"name": "Evening Debate", "hour_utc": 6, "format": "debate", "participants": ["analyst", "hustler"],
         "pace": 0}])
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:00:00Z")
    assert cli("tick").exit_code == 1
    row = cli("schedule", "--json").json()[0]
    run = row["today"][0]["run"]
    assert run["status"] == "retrying" and run["attempts"] == 1 and run["retry_after"] == "2026-11-21T06:05:00.000Z"
    assert "failed 1×, retry after 2026-11-21T06:05:00.000Z" in cli("schedule").stdout
    doctor = cli("doctor", "--offline", "--json").json()
    assert any("a tick retries it after 2026-11-21T06:05:00.000Z" in f["message"] for f in doctor["findings"])
    for when in ("2026-11-21T06:05:00Z", "2026-11-21T06:25:00Z"):
        monkeypatch.setenv("ROOMS_NOW", when)
        cli("tick")
    assert "failed after 3 attempts" in cli("schedule").stdout
    doctor = cli("doctor", "--offline", "--json").json()
    assert any("failed after 3 attempts" in f["message"] for f in doctor["findings"])


def test_a_request_that_cannot_run_as_asked_is_not_retried(project, cli):
    queue.enqueue(project, RoundtableRequest("standup", participants=["analyst", "boss"]))  # too few agents
    cli("tick")
    assert [(i.status, i.attempts) for i in queue.list_items(project)] == [("failed", 1)]


# ---- slots: display names, cron lines --------------------------------------------------------------------

def test_a_slot_name_is_a_display_name_with_a_derived_id(monkeypatch, project_dir, project):
    (project_dir / ".rooms.yaml").write_text(yaml.safe_dump({"schedule": [
        {"name": "Morning Standup", "hour_utc": 6, "format": "debate", "participants": ["analyst", "boss"]}]}))
    slot = schedule.load_slots(load_config(project))[0]
    assert (slot.name, slot.id) == ("Morning Standup", "morning-standup")
    monkeypatch.setenv("ROOMS_NOW", "2026-11-21T06:05:00Z")
    assert fire_schedule(project, load_config(project))[0]["detail"].startswith("Morning Standup (debate")
    assert [i.key for i in queue.list_items(project)] == ["morning-standup@2026-11-21"]


def test_slot_names_that_derive_the_same_id_are_refused():
    spec = {"hour_utc": 6, "format": "debate"}
    with pytest.raises(InvalidData, match="two slots named 'Standup' and 'standup!'"):
        schedule.load_slots(Config({"schedule": [{"name": "Standup", **spec}, {"name": "standup!", **spec}]}))
    with pytest.raises(InvalidData, match=r"schedule\[0\].name must be text with a letter or digit"):
        schedule.load_slots(Config({"schedule": [{"name": "!!", **spec}]}))


@pytest.mark.parametrize(("expr", "day", "times"), [
    ("0 9 * * mon-fri", date(2026, 11, 23), ["09:00"]),
    ("0 9 * * mon-fri", date(2026, 11, 22), []),  # a Sunday
    ("@daily", date(2026, 11, 22), ["00:00"]),
    ("*/15 9-17 * * *", date(2026, 11, 22), [f"{h:02d}:{m:02d}" for h in range(9, 18) for m in (0, 15, 30, 45)]),
    ("0 6 1 * mon", date(2026, 11, 30), ["06:00"]),  # cron's rule: day of month OR day of week
])
def test_cron_slots_take_real_cron_lines(expr, day, times):
    assert [t.strftime("%H:%M") for t in schedule.Cron.parse(expr).times_on(day)] == times


@pytest.mark.parametrize("expr", ["0 24 * * *", "0 6 * *", "0 6 * * funday", "* * * * * *", "@sometimes"])
def test_a_bad_cron_line_is_one_sentence_naming_the_slot(expr):
    spec = {"name": "Night Shift", "cron": expr, "format": "debate"}
    with pytest.raises(InvalidData, match=r"^\.rooms\.yaml: schedule\[0\] \(Night Shift\)\.cron ") as err:
        schedule.load_slots(Config({"schedule": [spec]}))
    assert "\n" not in str(err.value)


def test_croniter_is_imported_only_on_the_path_that_parses_cron_lines(project_dir):
    code = ("import sys; from rooms_cli.cli.app import app; from rooms_cli.roundtable import schedule;"
            "from rooms_cli.project.config import Config;"
            "schedule.load_slots(Config({'schedule': [{'name': 'a', 'hour_utc': 1, 'format': 'debate'}]}));"
            "print('croniter' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


# ---- scheduled rooms -------------------------------------------------------------------------------------

def test_scheduled_roundtables_leave_no_live_room_but_stay_readable(monkeypatch, project_dir, project, cli):
    (project_dir / ".rooms.yaml").write_text(yaml.safe_dump({"schedule": [
        {"name": f"slot {h}", "hour_utc": h, "format": "watercooler", "participants": ["analyst", "boss"],
         "pace": 0} for h in (6, 7)]}))
    before = [r["id"] for r in cli("room", "list", "--json").json()]
    for when in ("2026-11-21T06:05:00Z", "2026-11-21T07:05:00Z"):
        monkeypatch.setenv("ROOMS_NOW", when)
        assert cli("tick").exit_code == 0
    assert [r["id"] for r in cli("room", "list", "--json").json()] == before
    rooms = [i.room for i in queue.list_items(project)]
    assert len(rooms) == 2 and all(rooms)
    everything = {r["id"]: r for r in cli("room", "list", "--all", "--json").json()}
    assert all(everything[r]["status"] == "dropped" for r in rooms)
    assert len(cli("transcript", "--room", rooms[0], "--json").json()) > 2


def test_a_roundtable_queued_by_hand_keeps_its_live_room(project, cli):
    queue.enqueue(project, RoundtableRequest("watercooler", participants=["analyst", "boss"], turns=2, force=True))
    cli("tick")
    room = queue.list_items(project)[0].room
    assert room in [r["id"] for r in cli("room", "list", "--json").json()]
