"""`rooms status`: the project at a glance (issue 45, item 3) — unread messages and claims with lease time
left, each lane's open / doing / blocked, live groups, active rooms, the other agents' status lines — in at
most 25 lines, as JSON too, on the fast path; `rooms status TEXT` still sets your own line."""

from __future__ import annotations

import subprocess
import sys

from conftest import RETURN_FROM_MAIN, rooms_env
from jsonschema import Draft202012Validator

from rooms_cli.core.shapes import OVERVIEW

NOW = "2026-11-25T10:00:00Z"


def test_a_fresh_project_s_status_says_where_things_stand_in_a_few_lines(project, cli):
    run = cli("status", "--as", "alice")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.splitlines() == [
        "alice in room default · no status line (rooms status TEXT sets one)",
        "Inbox: nothing unread",
        "Claims: none (rooms task next claims the next task of your lane)",
        "Board of default: no open tasks",
    ]


def test_status_shows_unread_claims_lanes_groups_rooms_and_the_others(project, cli, monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", NOW)
    cli("status", "set", "Reviewing the auth spec", "--as", "bob")
    cli("send", "can you look at the login form?", "--to", "alice", "--as", "bob")
    spec = cli("task", "add", "Write the spec", "--lane", "alice", "--done", "spec exists", "--json").json()["id"]
    cli("task", "add", "Review it", "--lane", "alice", "--done", "reviewed", "--json")
    stuck = cli("task", "add", "Deploy", "--lane", "ops", "--done", "live", "--json").json()["id"]
    assert cli("task", "set-status", stuck, "blocked").exit_code == 0
    assert cli("task", "claim", spec, "--as", "alice", "--lease", "15m").exit_code == 0
    cli("group", "spawn", "panel", "--profile", "analyst")
    cli("chat", "@architect what about the cache?")
    monkeypatch.setenv("ROOMS_NOW", "2026-11-25T10:05:00Z")

    shown = cli("status", "--as", "alice").stdout
    assert "Inbox: 1 unread message (rooms inbox)\n  #1 bob: can you look at the login form?" in shown
    short = cli("status", "--as", "alice", "--json").json()["claims"][0]["short"]  # the id as the board shows it
    assert f"  {short}  Write the spec  (default/alice)  10m00s left" in shown
    assert "  alice               1 ·   1 ·   0" in shown and "  ops                 0 ·   0 ·   1" in shown
    assert "Groups: ▣ panel [0/1" in shown
    assert "Rooms: default (architect, 5m ago)" in shown
    assert "  bob              Reviewing the auth spec  (5m ago)" in shown

    doc = cli("status", "--as", "alice", "--json").json()
    assert not list(Draft202012Validator(OVERVIEW).iter_errors(doc))
    assert doc["claims"][0]["seconds_left"] == 600 and doc["claims"][0]["task"] == spec and doc["unread"][0]["from"] == "bob"
    assert cli("inbox", "--as", "alice", "--json").json()["unread"] == 1, "status marks nothing read"


def test_a_busy_project_still_fits_in_25_lines(project, cli):
    for n in range(12):
        cli("send", f"message {n}", "--to", "alice", "--as", f"peer{n}")
        cli("status", "set", f"working on part {n}", "--as", f"peer{n}")
    for n in range(9):
        task = cli("task", "add", f"task {n}", "--lane", f"lane{n}", "--done", "x", "--json").json()["id"]
        cli("task", "claim", task, "--as", "alice")
    for n in range(5):
        cli("group", "spawn", f"g{n}", "--profile", "analyst")
    for n in range(5):
        cli("room", "create", f"r{n}", "--agent", "ops")
        cli("chat", "@ops hi", "--room", f"r{n}")
    lines = cli("status", "--as", "alice").stdout.splitlines()
    assert len(lines) <= 25, "\n".join(lines)
    text = "\n".join(lines)
    for more in ("… 9 more messages", "… 6 more claims", "… 4 more lanes", "… 9 more agents", "… 2 more"):
        assert more in text, (more, text)


def test_status_text_sets_your_line_as_status_set_does(project, cli):
    assert cli("status", "Working on the login form", "--as", "alice").stdout == "alice: Working on the login form\n"
    assert cli("status", "--as", "alice", "Pairing with bob").exit_code == 0
    assert cli("status", "set", "Reviewing", "--as", "alice").exit_code == 0
    assert cli("status", "--as", "alice", "--json").json()["status"] == "Reviewing"
    assert cli("status", "--as", "bob", "--json").json()["agents"] == [
        {"agent": "alice", "status": "Reviewing", "updated": cli("status", "--as", "bob", "--json").json()["agents"][0]["updated"]}]


def test_status_runs_on_the_fast_path_without_typer(project_dir):
    """It is run often: the console script parses it itself (cli/fast.py), as `rooms board`."""
    probe = (RETURN_FROM_MAIN + "import sys; sys.argv = ['rooms', 'status', '--as', 'alice']\n"
             "from rooms_cli.cli.fast import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('TYPER' if 'typer' in sys.modules else 'FAST', file=sys.stderr)")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env=rooms_env({"ROOMS_DIR": str(project_dir)}))
    assert proc.stderr.strip().splitlines()[-1] == "FAST", proc.stderr
    assert proc.stdout.startswith("alice in room default")
