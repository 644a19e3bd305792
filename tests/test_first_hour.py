"""The first hour of a new user (issue 31): what `rooms init` suggests works, and so on."""

from __future__ import annotations

import pytest


def test_plain_init_suggests_making_an_agent_and_that_suggestion_works(tmp_path, cli, monkeypatch):
    target = tmp_path / "fresh"
    run = cli("init", str(target))
    assert run.exit_code == 0
    assert "Next: rooms agent new helper && rooms chat 'hello everyone'" in run.stdout
    monkeypatch.setenv("ROOMS_DIR", str(target))
    chat = cli("chat", "hello everyone")
    assert chat.exit_code == 1
    assert "this project has no agents yet" in chat.stderr and "rooms agent new helper" in chat.stderr
    assert cli("agent", "new", "helper").exit_code == 0
    assert cli("chat", "hello everyone").exit_code == 0


def test_init_with_an_example_set_suggests_chatting_right_away(tmp_path, cli):
    run = cli("init", str(tmp_path / "dev"), "--example", "dev")
    assert "Next: rooms chat 'hello everyone'" in run.stdout


def test_the_roundtable_example_set_names_its_leader_so_a_standup_opens_with_the_boss(tmp_path, cli, monkeypatch):
    target = tmp_path / "rt"
    assert cli("init", str(target), "--example", "roundtable").exit_code == 0
    assert "\nleader: boss\n" in (target / ".rooms.yaml").read_text()
    monkeypatch.setenv("ROOMS_DIR", str(target))
    run = cli("roundtable", "run", "standup", "--topic", "launch week", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["turns"][0]["speaker"] == "boss"


def test_a_plain_init_keeps_leader_commented_out(tmp_path, cli):
    cli("init", str(tmp_path / "plain"))
    assert "# leader: boss\n" in (tmp_path / "plain" / ".rooms.yaml").read_text()


def test_usage_errors_exit_2_for_a_bad_status_and_turns_out_of_range(project, cli):
    task = cli("task", "add", "demo", "--lane", "main", "--done", "it works", "--json").json()
    bad = cli("task", "set-status", task["id"], "bogus")
    assert bad.exit_code == 2 and "must be one of todo, blocked, failed, cancelled" in bad.stderr
    assert cli("roundtable", "run", "standup", "--turns", "50").exit_code == 2


def test_a_key_given_twice_in_rooms_yaml_is_refused_naming_both_lines(project_dir, cli):
    cfg = project_dir / ".rooms.yaml"
    cfg.write_text("providers:\n  a: {type: openai}\ndefault_model: offline\nproviders:\n  b: {type: openai}\n")
    run = cli("config", "show")
    assert run.exit_code == 1
    assert "the key 'providers' is given twice (lines 1 and 4)" in run.stderr


def test_the_transcript_shows_the_date_and_on_request_the_ids(project, cli):
    cli("chat", "@architect how should the middleware handle auth?")
    plain = cli("transcript").stdout
    assert plain.startswith("── 20") and "(UTC) ──" in plain.splitlines()[0]
    with_ids = cli("transcript", "--ids", "--last", "1").stdout.splitlines()[-1]
    assert " m-" in with_ids


def test_a_hand_run_roundtable_drops_its_room_and_its_id_finds_the_transcript(project, cli):
    doc = cli("roundtable", "run", "debate", "-p", "analyst,hustler", "--turns", "2", "--force", "--json").json()
    live = [r["id"] for r in cli("room", "list", "--json").json()]
    assert doc["room"] not in live
    shown = cli("transcript", "--room", doc["id"], "--json")
    assert shown.exit_code == 0 and any(m["text"].startswith("debate done") or m["kind"] == "roundtable"
                                        for m in shown.json())


def test_an_idle_tick_prints_nothing_when_piped_and_actions_are_time_stamped(project_dir, rooms):
    idle = rooms("tick", cwd=project_dir)
    assert idle.exit_code == 0 and idle.stdout == ""
    rooms("roundtable", "queue", "debate", "-p", "analyst,hustler", "--turns", "2", "--force", cwd=project_dir)
    busy = rooms("tick", cwd=project_dir).stdout.splitlines()
    assert busy[0].endswith("(2 turns)") and " roundtables: start debate with analyst, hustler in room " in busy[0]
    assert all(line[:4].isdigit() and line[19] == "Z" for line in busy)


def _leaf_commands():
    from conftest import command_tree

    return sorted(command_tree())


@pytest.mark.parametrize("path", _leaf_commands())
def test_every_command_refuses_an_unknown_option_as_a_usage_error(cli, path):
    """One exit-code rule: a usage error is 2, whatever the command (README: Exit codes)."""
    run = cli(*path.split(), "--no-such-option")
    assert run.exit_code == 2, (path, run.exit_code, run.stderr)
    assert "--no-such-option" in run.stderr


def test_done_after_your_lease_lapsed_is_lease_expired_exit_3_even_without_the_lease_id(project, cli, monkeypatch):
    task = cli("task", "add", "x", "--lane", "ops", "--done", "d", "--json").json()
    monkeypatch.setenv("ROOMS_NOW", "2026-11-25T10:00:00Z")
    assert cli("task", "claim", task["id"], "--as", "ops", "--lease", "1m").exit_code == 0
    monkeypatch.setenv("ROOMS_NOW", "2026-11-25T10:05:00Z")
    late = cli("task", "done", task["id"], "--as", "ops", "--summary", "s", "--json")
    assert late.exit_code == 3 and '"code": "lease_expired"' in late.stderr
    other = cli("task", "done", task["id"], "--as", "reviewer", "--summary", "s")
    assert other.exit_code == 1 and "holds no lease" in other.stderr  # not the holder: nothing of theirs lapsed


def test_joining_another_room_says_it_is_now_the_current_room_for_later_commands(project, cli):
    run = cli("room", "join", "sync")
    assert run.exit_code == 0
    assert "sync is now the current room for rooms commands too (it was default; rooms room use default goes back)" \
        in run.stderr
    assert "now the current room" not in cli("room", "join", "sync").stderr  # already the current one


def test_models_list_does_not_call_the_key_of_a_local_anthropic_server_missing(project_dir, cli, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    cfg = project_dir / ".rooms.yaml"
    cfg.write_text(cfg.read_text().replace(
        "\nproviders:\n", "\nproviders:\n  local: {type: anthropic, base_url: 'http://127.0.0.1:9'}\n", 1))
    lines = {line.split()[0]: line for line in cli("models", "list").stdout.splitlines()[1:]}
    assert "key:" not in lines["local"]  # a URL of its own: only the credentials it names, none here
    assert "(missing)" in lines["anthropic"]  # Anthropic's own API needs one
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert "(not set, not needed here)" in cli("models", "list").stdout


def test_version_prints_without_loading_typer():
    import subprocess
    import sys

    from conftest import rooms_env

    from rooms_cli import __version__

    code = ("import sys; sys.argv = ['rooms', '--version']; from rooms_cli.cli.fast import main; main(); "
            "print('typer' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rooms_env()).stdout
    assert out.splitlines() == [f"rooms {__version__}", "False"]
