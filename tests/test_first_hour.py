"""The first hour of a new user (issue 31): what `rooms init` suggests works, and so on."""

from __future__ import annotations


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
