"""`rooms board` and `rooms task …` on the command line: output, --json, error codes and exit codes."""

from __future__ import annotations

import json

import pytest

T0 = "2026-11-21T09:00:00.000Z"


@pytest.fixture
def clock(monkeypatch):
    monkeypatch.setenv("ROOMS_NOW", T0)
    return lambda moment: monkeypatch.setenv("ROOMS_NOW", moment)


def add(cli, title="Write the spec", lane="researcher", *extra):
    result = cli("task", "add", title, "--lane", lane, "--done", "specs/auth.md exists", "--json", *extra)
    assert result.exit_code == 0, result.stderr
    return result.json()["id"]


def test_every_task_command_has_help_with_an_example(cli):
    names = ["add", "create", "list", "show", "update", "archive", "claim", "next", "renew", "release", "done",
             "set-status", "assign", "accept", "reject", "resolve"]
    for name in names:
        result = cli("task", name, "--help")
        assert result.exit_code == 0 and "Example: rooms" in result.stdout, name
        assert "--json" in result.stdout, name
    board = cli("board", "--help")
    assert "Example: rooms board" in board.stdout and "--json" in board.stdout and "--room" in board.stdout


def test_claim_prints_the_lease_id_in_text_and_json(cli, project_dir, clock):
    task_id = add(cli)
    text = cli("task", "claim", task_id[:14], "--as", "researcher")
    assert text.exit_code == 0
    board = cli("board", "--json").json()
    lease_id = board["lanes"][0]["tasks"][0]["lease"]["lease_id"]
    assert lease_id in text.stdout
    other = add(cli, "second")
    claim = cli("task", "claim", other, "--as", "researcher", "--lease", "15m", "--json").json()
    assert claim["lease_id"].startswith("l-") and claim["expires_at"] == "2026-11-21T09:15:00.000Z"
    assert claim["task"]["status"] == "doing" and claim["lease"]["fence"] == 1


def test_already_claimed_exits_3_with_holder_and_expiry_in_json(cli, project_dir, clock):
    task_id = add(cli)
    cli("task", "claim", task_id, "--as", "researcher", env={"ROOMS_INSTANCE": "one"})
    lost = cli("task", "claim", task_id, "--as", "researcher", "--json", env={"ROOMS_INSTANCE": "two"})
    assert lost.exit_code == 3 and lost.stdout == ""
    err = lost.err_json()["error"]
    assert err["code"] == "already_claimed"
    assert "researcher/one" in err["message"] and "2026-11-21T09:10:00.000Z" in err["message"]
    plain = cli("task", "claim", task_id, "--as", "researcher")
    assert plain.exit_code == 3 and plain.stderr.startswith("error: ") and "Traceback" not in plain.stderr


def test_claiming_your_own_task_again_with_its_lease_says_it_is_yours_and_returns_the_lease(cli, project_dir, clock):
    task_id = add(cli)
    env = {"ROOMS_INSTANCE": "vm:16163"}
    first = cli("task", "claim", task_id, "--as", "frontend", "--json", env=env).json()
    before = sorted((project_dir / ".rooms").rglob("*.jsonl"))
    sizes = [p.stat().st_size for p in before]
    again = cli("task", "claim", task_id, "--as", "frontend", "--lease-id", first["lease_id"], env=env)
    assert again.exit_code == 0, again.stderr
    assert f"task {task_id} (Write the spec) is already yours: held as frontend/vm:16163" in again.stdout
    assert f"lease {first['lease_id']}" in again.stdout
    doc = cli("task", "claim", task_id, "--as", "frontend", "--json", env={**env, "ROOMS_LEASE": first["lease_id"]}).json()
    assert doc["already_yours"] is True and doc["lease_id"] == first["lease_id"] and first["already_yours"] is False
    assert [p.stat().st_size for p in before] == sizes  # nothing written
    same_plate = cli("task", "claim", task_id, "--as", "frontend", env=env)
    assert same_plate.exit_code == 3  # the same agent and instance without the lease: a claim is a lease's


def test_lease_commands_take_the_lease_from_rooms_lease(cli, project_dir, clock):
    task_id = add(cli)
    lease_id = cli("task", "claim", task_id, "--as", "researcher", "--json").json()["lease_id"]
    renewed = cli("task", "renew", task_id, "--lease", "20m", "--json", env={"ROOMS_LEASE": lease_id})
    assert renewed.exit_code == 0 and renewed.json()["lease"]["expires_at"] == "2026-11-21T09:20:00.000Z"
    wrong = cli("task", "release", task_id, "--json", env={"ROOMS_LEASE": "l-WRONG"})
    assert wrong.exit_code == 3 and wrong.err_json()["error"]["code"] == "lease_mismatch"
    released = cli("task", "release", task_id, "--lease-id", lease_id, "--json")
    assert released.json()["status"] == "todo"


def test_lapsed_and_fenced_leases_have_their_own_codes(cli, project_dir, clock):
    task_id = add(cli)
    old = cli("task", "claim", task_id, "--as", "researcher", "--json").json()["lease_id"]
    clock("2026-11-21T09:30:00.000Z")
    expired = cli("task", "renew", task_id, "--lease-id", old, "--json")
    assert expired.exit_code == 3 and expired.err_json()["error"]["code"] == "lease_expired"
    cli("task", "claim", task_id, "--as", "researcher")
    fenced = cli("task", "done", task_id, "--lease-id", old, "--summary", "x", "--json")
    assert fenced.exit_code == 3 and fenced.err_json()["error"]["code"] == "lease_fenced"


def test_invalid_transition_exit_3_lists_possible_transitions(cli, project_dir, clock):
    task_id = add(cli)
    assert cli("task", "set-status", task_id, "blocked").exit_code == 0
    result = cli("task", "claim", task_id, "--as", "researcher", "--json")
    assert result.exit_code == 3
    err = result.err_json()["error"]
    assert err["code"] == "invalid_transition" and "todo, failed, cancelled" in err["message"]


def test_next_with_nothing_to_claim_exits_0_with_json_null(cli, project_dir):
    result = cli("task", "next", "--as", "researcher", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) is None
    text = cli("task", "next", "--as", "researcher")
    assert text.exit_code == 0 and "nothing to claim" in text.stdout


def test_done_prints_the_record_and_the_board_shows_it(cli, project_dir, clock):
    (project_dir / "specs").mkdir()
    (project_dir / "specs" / "auth.md").write_text("x")
    task_id = add(cli)
    lease_id = cli("task", "next", "--as", "researcher", "--json").json()["lease_id"]
    done = cli("task", "done", task_id, "--lease-id", lease_id, "--summary", "spec written", "--artifact",
               "file:specs/auth.md", "--result-ref", "file:specs/auth.md", "--next", "review", "--json")
    assert done.exit_code == 0, done.stderr
    record = done.json()
    assert record["status"] == "done" and record["artifacts"] == ["file:specs/auth.md"] and record["next"] == "review"
    board = cli("board", "--json").json()
    assert board["done"][0]["record"] == record
    md = cli("board", "--format", "md")
    assert "### done" in md.stdout and "spec written" in md.stdout


def test_bad_reference_is_one_clear_sentence_exit_1(cli, project_dir, clock):
    task_id = add(cli)
    lease_id = cli("task", "claim", task_id, "--as", "researcher", "--json").json()["lease_id"]
    result = cli("task", "done", task_id, "--lease-id", lease_id, "--summary", "x", "--result-ref", "file:../../etc/passwd")
    assert result.exit_code == 1 and "outside the project" in result.stderr and "Traceback" not in result.stderr


def test_show_includes_the_history(cli, project_dir, clock):
    task_id = add(cli)
    cli("task", "update", task_id, "--title", "Renamed", "--detail", "more words")
    shown = cli("task", "show", task_id, "--json").json()
    assert shown["title"] == "Renamed" and [e["ev"] for e in shown["history"]] == ["create", "update"]
    text = cli("task", "show", task_id)
    assert "Renamed" in text.stdout and "update" in text.stdout


def test_create_is_an_alias_of_add(cli, project_dir):
    result = cli("task", "create", "x", "--lane", "researcher", "--done", "y", "--json")
    assert result.exit_code == 0 and result.json()["title"] == "x"


def test_missing_definition_of_done_is_a_usage_error(cli, project_dir):
    assert cli("task", "add", "x", "--lane", "researcher").exit_code == 2


def test_unknown_task_and_unknown_room_are_not_found(cli, project_dir):
    missing = cli("task", "show", "t-01NOPE", "--json")
    assert missing.exit_code == 1 and missing.err_json()["error"]["code"] == "not_found"
    room = cli("board", "--room", "nowhere", "--json")
    assert room.exit_code == 1 and "no room" in room.err_json()["error"]["message"]
    bad = cli("board", "--room", "../x")
    assert bad.exit_code == 2 and "invalid room id" in bad.stderr  # a bad option value (README: exit codes)


def test_board_filters_by_lane_and_status(cli, project_dir):
    add(cli, "a", "researcher")
    b = add(cli, "b", "reviewer")
    cli("task", "set-status", b, "blocked")
    by_lane = cli("board", "--lane", "reviewer", "--json").json()
    assert [t["title"] for lane in by_lane["lanes"] for t in lane["tasks"]] == ["b"]
    by_status = cli("board", "--status", "todo", "--json").json()
    assert [t["title"] for lane in by_status["lanes"] for t in lane["tasks"]] == ["a"]
    table = cli("board")
    assert "lane researcher" in table.stdout and "lane reviewer" in table.stdout


def test_assign_accept_reject_on_the_command_line(cli, project_dir):
    cli("agent", "new", "bob-bot", "--owner", "bob")
    task_id = add(cli, "x", "researcher")
    proposed = cli("task", "assign", task_id, "--to", "bob-bot", "--as", "alice", "--json").json()
    assert proposed["pending"]["owner"] == "bob"
    refused = cli("task", "accept", task_id, "--as", "alice", "--json")
    assert refused.exit_code == 1 and refused.err_json()["error"]["code"] == "not_owner"
    assert cli("task", "reject", task_id, "--as", "bob", "--json").json()["lane"] == "researcher"


def test_archive_and_resolve(cli, project_dir):
    task_id = add(cli)
    assert cli("task", "archive", task_id, "--json").json()["archived"] is True
    assert cli("board", "--json").json()["counts"]["todo"] == 0
    assert f"{task_id}  [todo, archived]  Write the spec" in cli("task", "show", task_id).stdout
    nothing = cli("task", "resolve", task_id)
    assert nothing.exit_code == 1 and "no conflicts" in nothing.stderr


def test_real_process_claim_race_has_exactly_one_winner(rooms, project_dir):
    """Two `rooms task claim` processes started together: one wins, one gets already_claimed."""
    import subprocess
    import sys

    from tests.conftest import rooms_env

    task_id = add_via(rooms)
    procs = [
        subprocess.Popen([sys.executable, "-m", "rooms_cli", "task", "claim", task_id, "--as", "researcher", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=rooms_env({"ROOMS_INSTANCE": str(n)}))
        for n in range(2)
    ]
    outcomes = sorted(p.wait(timeout=60) for p in procs)
    assert outcomes == [0, 3]
    loser = next(p for p in procs if p.returncode == 3)
    assert json.loads(loser.stderr.read().strip().splitlines()[-1])["error"]["code"] == "already_claimed"


def add_via(rooms):
    result = rooms("task", "add", "race me", "--lane", "researcher", "--done", "d", "--json")
    assert result.exit_code == 0, result.stderr
    return result.json()["id"]


def test_demo_shows_a_race_a_lapsed_lease_and_a_done_record(cli, tmp_path):
    result = cli("demo", "--dir", str(tmp_path / "demo"), "--only", "board", "--json")
    assert result.exit_code == 0, result.stderr
    lines = [e["text"] for e in result.json()["events"]]
    text = "\n".join(lines)
    assert "already_claimed" in text and "lease_fenced" in text and "lapsed" in text
    record = json.loads(next(e["text"] for e in result.json()["events"] if e["kind"] == "record"))
    assert record["status"] == "done" and record["result_ref"] == "file:specs/auth.md"


def test_the_demo_prints_the_done_record_for_people_not_as_json(cli, tmp_path):
    result = cli("demo", "--dir", str(tmp_path / "demo"), "--only", "board")
    assert result.exit_code == 0, result.stderr
    assert "  summary: auth spec: 15 min tokens\n  artifacts: file:specs/auth.md\n" in result.stdout
    assert '{"artifacts"' not in result.stdout


def test_done_after_next_finds_the_holders_lease_without_rooms_lease(cli, project_dir, clock, monkeypatch):
    monkeypatch.setenv("ROOMS_AGENT", "researcher")
    task_id = add(cli)
    assert cli("task", "next", "--json").json()["task"]["id"] == task_id
    other = cli("task", "done", task_id, "--summary", "not mine", "--as", "reviewer")
    assert other.exit_code == 1
    assert "no lease id and reviewer holds no lease on task" in other.stderr and "researcher" in other.stderr
    done = cli("task", "done", task_id, "--summary", "spec written", "--json")
    assert done.exit_code == 0, done.stderr
    assert done.json()["status"] == "done"


def test_task_list_filters_by_lane_status_and_holder(cli, project_dir, clock):
    first = add(cli, "Write the spec")
    second = add(cli, "Review the spec", "reviewer")
    third = add(cli, "Archive me", "reviewer")
    cli("task", "archive", third)
    cli("task", "claim", second, "--as", "reviewer")
    every = cli("task", "list", "--json").json()
    assert [t["id"] for t in every] == [first, second]  # lane order; archived left out
    assert [t["id"] for t in cli("task", "list", "--lane", "researcher", "--json").json()] == [first]
    assert [t["id"] for t in cli("task", "list", "--status", "doing", "--json").json()] == [second]
    assert [t["id"] for t in cli("task", "list", "--holder", "reviewer", "--json").json()] == [second]
    assert cli("task", "list", "--holder", "researcher", "--json").json() == []
    text = cli("task", "list").stdout.splitlines()
    assert text[0].startswith(f"{first}  [todo]  Write the spec") and text[1].startswith(f"{second}  [doing]")
    assert cli("task", "list", "--status", "bogus").exit_code == 2
