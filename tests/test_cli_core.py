"""The command line as a user meets it: help, version, init, JSON, errors, start-up cost."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import command_tree, rooms_env


def all_commands():
    """Every command path of the app, e.g. ("agent", "show")."""
    return [tuple(path.split()) for path in command_tree()]


def test_rooms_help_lists_commands(cli):
    run = cli("--help")
    assert run.exit_code == 0 and "init" in run.stdout and "Example:" in run.stdout


@pytest.mark.parametrize("path", all_commands(), ids=lambda p: " ".join(p))
def test_every_command_has_help_with_an_example(cli, path):
    run = cli(*path, "--help")
    assert run.exit_code == 0, run.stderr
    assert "Example: rooms" in run.stdout or "Example:\n" in run.stdout, f"`rooms {' '.join(path)} --help` has no example"


def test_version(cli):
    from rooms_cli import __version__

    assert cli("--version").stdout.strip() == f"rooms {__version__}"


def test_init_twice_changes_nothing_and_says_so(tmp_path, cli):
    first = cli("init", str(tmp_path), "--example", "roundtable")
    assert first.exit_code == 0 and "Initialized" in first.stdout
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    second = cli("init", str(tmp_path), "--example", "roundtable", "--json")
    assert second.exit_code == 0
    assert second.json()["changed"] is False
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot
    assert "Nothing to do" in cli("init", str(tmp_path)).stdout


def test_a_second_init_example_keeps_kicked_agents_out_and_removed_agents_removed(tmp_path, cli):
    env = {"ROOMS_DIR": str(tmp_path)}
    assert cli("init", str(tmp_path), "--example", "dev").exit_code == 0
    assert cli("room", "kick", "ops", env=env).exit_code == 0
    (tmp_path / ".rooms" / "agents" / "judge.md").unlink()
    snapshot = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    again = cli("init", str(tmp_path), "--example", "dev")
    assert again.exit_code == 0, again.stderr
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == snapshot
    assert "Nothing to do" in again.stdout
    assert "skipped .rooms/agents/judge.md (the dev set was added before; judge was removed since)" in again.stdout
    assert "skipped default room roster: ops stay out (kicked; `rooms room invite NAME` brings one back)" in again.stdout
    assert cli("init", str(tmp_path), "--example", "dev", "--json").json()["skipped"]


def test_init_example_into_an_existing_project_adds_the_set_and_seats_it(tmp_path, cli):
    cli("init", str(tmp_path))
    run = cli("init", str(tmp_path), "--example", "gamedev", "--json")
    assert "default room roster += artist, community, designer, engineer, qa" in run.json()["created"]


def test_init_inside_an_existing_project_warns_about_nesting(tmp_path, cli):
    assert "nested" not in cli("init", str(tmp_path)).stderr
    inner = tmp_path / "sub" / "dir"
    inner.mkdir(parents=True)
    run = cli("init", str(inner))
    assert run.exit_code == 0 and (inner / ".rooms").is_dir()
    assert f"warning: {inner} is inside the rooms project {tmp_path}: this makes a nested project" in run.stderr
    assert "nested" not in cli("init", str(inner)).stderr  # only when it is made


def test_init_writes_git_friendly_files(tmp_path, cli):
    cli("init", str(tmp_path))
    assert "*.jsonl merge=union\n" in (tmp_path / ".rooms" / ".gitattributes").read_text()
    ignore = (tmp_path / ".rooms" / ".gitignore").read_text()
    assert "*.lock" in ignore and "*.tmp" in ignore
    assert (tmp_path / ".rooms.yaml").exists()
    assert (tmp_path / ".rooms" / "rooms" / "default" / "state.jsonl").exists()  # an event log: merges in git


def test_init_with_an_unknown_example_lists_the_sets(tmp_path, cli):
    run = cli("init", str(tmp_path), "--example", "nope")
    assert run.exit_code == 2 and run.stderr == "error: --example: must be one of dev, gamedev, roundtable, not 'nope'\n"
    assert not (tmp_path / ".rooms").exists()


def test_no_project_is_one_line_saying_run_init(tmp_path, rooms):
    run = rooms("agent", "list", cwd=tmp_path)
    assert run.exit_code == 1
    assert run.stderr.strip() == "error: no .rooms/ directory here or in any parent directory; run `rooms init` first"


def test_errors_under_json_are_a_json_document_on_stderr(project_dir, cli):
    run = cli("agent", "show", "../x", "--json")
    assert run.exit_code == 1 and run.stdout == ""
    assert run.err_json()["error"]["code"] == "invalid_input"


def test_usage_errors_exit_2(cli):
    assert cli("agent", "show").exit_code == 2
    assert cli("no-such-command").exit_code == 2


def test_internal_errors_are_one_line_unless_rooms_debug(project_dir, rooms):
    with (project_dir / ".rooms" / "rooms" / "default" / "state.jsonl").open("a") as log:
        log.write('{"op": "created", "eid": "e-7", "ts": "2099-01-01T00:00:00.000Z", "state": {"id": "default", "roster": 7}}\n')
    run = rooms("room", "show", "default")
    assert run.exit_code == 1 and "Traceback" not in run.stderr and "roster" in run.stderr
    debug = rooms("room", "show", "default", env={"ROOMS_DEBUG": "1"})
    assert "Traceback" in debug.stderr


def test_startup_does_not_import_heavy_modules():
    code = (
        "import sys, rooms_cli.cli.app; "
        "print([m for m in ('httpx', 'rapidfuzz', 'yaml', 'frontmatter', 'rich.progress', 'asyncio') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rooms_env())
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.replace("'", '"')) == []


def test_json_output_of_core_commands_parses(project_dir, cli):
    for args in (("agent", "list"), ("config", "show"), ("tick", "--dry-run")):
        run = cli(*args, "--json")
        assert run.exit_code == 0, (args, run.stderr)
        json.loads(run.stdout)


def test_demo_only_takes_a_comma_list_and_refuses_unknown_sections(cli, tmp_path):
    run = cli("demo", "--dir", str(tmp_path / "demo"), "--only", "board,chat", "--json")
    assert run.exit_code == 0, run.stderr
    assert run.json()["sections"] == ["chat", "board"]  # the demo's order, whatever order was asked
    bad = cli("demo", "--dir", str(tmp_path / "bogus"), "--only", "board,bogus")
    assert bad.exit_code == 2
    assert bad.stderr.strip() == ("error: --only names 'bogus': not a demo section; choose from chat, board, roundtable, "
                                  "groups, messaging (comma-separated, e.g. --only board,chat)")
    assert not (tmp_path / "bogus").exists()


@pytest.mark.parametrize("value", ["x", "-1", "nan", "inf"])
def test_a_bad_rooms_lock_timeout_is_one_sentence_for_every_command(project_dir, cli, value):
    for command in (["transcript"], ["board"], ["chat", "hello"]):
        run = cli(*command, env={"ROOMS_LOCK_TIMEOUT": value})
        assert run.exit_code == 1, (command, run.stdout)
        assert run.stderr == f"error: ROOMS_LOCK_TIMEOUT must be a number of seconds (0 or more), not {value!r}\n"


def test_demo_removes_its_temporary_directory_unless_keep(tmp_path, rooms):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    gone = rooms("demo", "--only", "board", env=env, cwd=tmp_path)
    assert gone.exit_code == 0, gone.stderr
    assert list(scratch.glob("rooms-demo-*")) == []
    assert "now removed; `rooms demo --keep` keeps its files" in gone.stdout
    kept = rooms("demo", "--only", "board", "--keep", "--json", env=env, cwd=tmp_path)
    [left] = scratch.glob("rooms-demo-*")
    assert kept.json()["dir"] == str(left) and kept.json()["kept"] is True and (left / ".rooms").is_dir()
    mine = rooms("demo", "--only", "board", "--dir", str(tmp_path / "mine"), "--json", env=env, cwd=tmp_path)
    assert mine.json()["kept"] is True and (tmp_path / "mine" / ".rooms").is_dir()


def test_the_readme_says_how_long_the_test_command_takes():
    from pathlib import Path

    first = (Path(__file__).resolve().parent.parent / "README.md").read_text().split("```", 2)[1]
    line = next(ln for ln in first.splitlines() if "python -m pytest" in ln)
    assert "minutes" in line


@pytest.mark.parametrize(("words", "expected"), [
    ("rooms send hi --to re", ["researcher", "reviewer"]),
    ("rooms chat hi --as wr", ["writer"]),
    ("rooms chat --room d", ["default"]),
    ("rooms group status r", ["rev"]),
    ("rooms agent show op", ["ops"]),
    ("rooms room use d", ["default"]),
    ("rooms room create sync --agent wr", ["writer"]),
    ("rooms task list --holder re", ["researcher", "reviewer"]),
    ("rooms group spawn rev --profile op", ["ops"]),
    ("rooms spawn do-it --profile wr", ["writer"]),
    ("rooms memory list wr", ["writer"]),
    ("rooms roundtable run debate --participants writer,re", ["writer,researcher", "writer,reviewer"]),
])
def test_agent_room_and_group_names_tab_complete(project_dir, cli, words, expected):
    assert cli("group", "spawn", "rev", "--profile", "ops").exit_code == 0
    run = complete(words)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == expected


def complete(words: str, **extra):
    """What the bash completion script asks the installed `rooms` for (typer's completion protocol)."""
    from pathlib import Path

    env = rooms_env({"_ROOMS_COMPLETE": "complete_bash", "COMP_WORDS": words,
                     "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1))} | extra)
    return subprocess.run([str(Path(sys.executable).parent / "rooms")], capture_output=True, text=True, env=env, timeout=60)


def test_completion_outside_a_project_offers_nothing_and_never_fails(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = complete("rooms send hi --to ", ROOMS_DIR="")
    assert run.returncode == 0 and run.stdout.strip() == "" and "Traceback" not in run.stderr
