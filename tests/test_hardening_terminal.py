"""Hardening, round two: terminal escapes in human output, undecodable input.

Text is stored exactly as given and `--json` prints it exactly; whatever reaches a person's terminal
has its control characters shown as escapes (`\\x1b`), never obeyed. Arguments, stdin and
environment values that are not UTF-8 are refused in one sentence before anything is written.
"""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from hardening_kit import changed_files, problems_with_error, snapshot

ESC = "\x1b"
PAYLOAD = "st \x1b]0;PWN\x07\x1b[2J\x9b31m\u202e"  # OSC title, CSI clear, 8-bit CSI, bidi override
RAW = (ESC, "\x07", "\x9b", "\u202e")


def raw_controls(text: str) -> list[str]:
    return [repr(c) for c in RAW if c in text]


REPLY_SCRIPT = textwrap.dedent(
    f"""
    import sys
    sys.stdin.read()
    sys.stdout.write({"said " + PAYLOAD!r})
    """
)


@pytest.fixture
def hostile(project_dir, tmp_path, cli):
    """A project where every kind of stored text carries terminal escapes: a status, a message, a
    task title, an agent's display name, a model reply (a `command` provider) and a transcript."""
    script = tmp_path / "model.py"
    script.write_text(REPLY_SCRIPT)
    import yaml

    config = project_dir / ".rooms.yaml"
    data = yaml.safe_load(config.read_text()) or {}
    data["providers"] = {**(data.get("providers") or {}), "evil": {"type": "command", "command": [sys.executable, str(script)]}}
    config.write_text(yaml.safe_dump(data))  # a second `providers:` key would be refused
    agent = project_dir / ".rooms" / "agents" / "mallory.md"
    agent.write_text("---\nid: mallory\nname: \"Mal\\e]0;x\\aory\"\nmodel: evil:any\ntags: [escapes]\n---\nYou echo.\n")
    for args in (("status", "set", PAYLOAD, "--as", "bob"),
                 ("send", PAYLOAD, "--to", "you", "--as", "bob"),
                 ("task", "add", "title " + PAYLOAD, "--lane", "ops", "--done", "done " + PAYLOAD, "--as", "you"),
                 ("room", "invite", "mallory"), ("chat", "@mallory " + PAYLOAD, "--as", "you")):
        run = cli(*args)
        assert run.exit_code == 0, (args, run.stdout, run.stderr)
    return project_dir


HUMAN_VIEWS = [
    ("agents",), ("inbox", "--peek", "--as", "you"), ("inbox", "--as", "you"), ("board",),
    ("attention", "--peek", "--as", "you"), ("transcript",), ("status", "set", PAYLOAD, "--as", "bob"),
    ("watch", "--all", "--last", "50", "--timeout", "0"), ("task", "show", "t-"),
    ("chat", "@mallory again", "--as", "you"), ("agent", "show", "mallory"), ("agent", "list"),
]


@pytest.mark.parametrize("args", HUMAN_VIEWS, ids=" ".join)
def test_human_output_never_carries_a_raw_control_character(hostile, cli, args):
    if args[:2] == ("task", "show"):
        args = ("task", "show", cli("board", "--json").json()["lanes"][0]["tasks"][0]["id"])
    run = cli(*args)
    assert run.exit_code == 0, run.stderr
    assert not raw_controls(run.stdout), run.stdout
    assert not raw_controls(run.stderr), run.stderr
    assert "\\x1b" in run.stdout  # shown, as an escape


def test_json_output_keeps_stored_text_exact(hostile, cli):
    statuses = {a["name"]: a for a in cli("agents", "--json").json()}
    assert statuses["bob"]["status"] == PAYLOAD
    assert any(m["text"] == PAYLOAD for m in cli("inbox", "--peek", "--as", "you", "--json").json()["messages"])
    titles = [t["title"] for lane in cli("board", "--json").json()["lanes"] for t in lane["tasks"]]
    assert titles == ["title " + PAYLOAD]
    texts = [m.get("text", "") for m in cli("transcript", "--json").json()]
    assert "said " + PAYLOAD in texts and "@mallory " + PAYLOAD in texts


def test_stored_text_is_kept_exactly_as_given(hostile):
    log = (hostile / ".rooms" / "rooms" / "default" / "transcript.jsonl").read_text("utf-8")
    assert any(json.loads(line).get("text") == "said " + PAYLOAD for line in log.splitlines())


def test_an_error_sentence_never_carries_a_raw_control_character(project_dir, cli):
    run = cli("task", "show", "t-" + ESC + "]0;x")
    assert run.exit_code != 0
    assert not raw_controls(run.stderr), run.stderr


def test_console_markup_and_emoji_codes_in_stored_text_are_shown_as_typed(project_dir, cli):
    assert cli("task", "add", "[/x] :smile: [red]t", "--lane", "ops", "--done", "d", "--as", "you").exit_code == 0
    run = cli("board")
    assert run.exit_code == 0, run.stderr
    assert "[/x] :smile: [red]t" in run.stdout


def test_terminal_safe_text_shows_each_control_as_an_escape():
    from rooms_cli.core.terminal import safe

    assert safe("a\x1b[2Jb\tc\nd") == "a\\x1b[2Jb\tc\nd"
    assert safe("\x9b\x7f\u202e\udcff") == "\\x9b\\x7f\\u202e\\xff"
    assert safe("plain — ünïcode ✓") == "plain — ünïcode ✓"


# -- undecodable input ---------------------------------------------------------------------------

BAD = "x\udcff"  # what Python makes of the byte 0xff in an argument (surrogateescape)

UNDECODABLE_ARGS = [
    ("chat", BAD), ("send", BAD, "--to", "bob"), ("task", "add", BAD, "--lane", "a", "--done", "d"),
    ("task", "add", "t", "--lane", "a", "--done", BAD), ("status", "set", BAD), ("group", "create", BAD),
    ("agent", "new", "x", "--directive", BAD), ("room", "create", BAD), ("board", "--room", BAD),
]


@pytest.mark.parametrize("args", UNDECODABLE_ARGS, ids=lambda a: " ".join(a).replace(BAD, "BAD"))
def test_an_undecodable_argument_is_one_sentence_naming_it_and_writes_nothing(project_dir, args):
    from hardening_kit import invoke

    before = snapshot(project_dir)
    out = invoke(args)
    assert not problems_with_error(out, codes=(2,)), (out.stderr, problems_with_error(out, codes=(2,)))
    assert "not valid UTF-8" in out.stderr and "x\\xff" in out.stderr
    assert changed_files(before, snapshot(project_dir)) == []


def test_an_undecodable_option_value_names_the_option(project_dir):
    from hardening_kit import invoke

    out = invoke(("task", "add", "t", "--lane", "a", "--done", BAD))
    assert "--done" in out.stderr


@pytest.mark.parametrize("args", [("chat",), ("group", "reply", "g", "-", "--as", "you")], ids=" ".join)
def test_undecodable_stdin_is_one_sentence_and_writes_nothing(project_dir, rooms, args):
    import subprocess

    from conftest import rooms_env

    before = snapshot(project_dir)
    proc = subprocess.run([sys.executable, "-m", "rooms_cli", *args], input=b"hello \xff there",
                          capture_output=True, env=rooms_env({"ROOMS_AGENT": "you"}), timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode in (1, 2), err
    assert "stdin is not valid UTF-8" in err and "Traceback" not in err and "internal" not in err
    assert changed_files(before, snapshot(project_dir)) == []


@pytest.mark.parametrize("var", ["ROOMS_AGENT", "ROOMS_ROOM", "ROOMS_NOW", "USER"])
def test_an_undecodable_environment_value_is_one_sentence_naming_it(project_dir, var):
    import subprocess

    from conftest import rooms_env

    env = {k.encode(): v.encode("utf-8", "surrogateescape") for k, v in rooms_env().items()}
    env[var.encode()] = b"a\xff"
    before = snapshot(project_dir)
    proc = subprocess.run([sys.executable, "-m", "rooms_cli", "send", "hi", "--to", "bob"], capture_output=True,
                          env=env, timeout=60)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert var in err and "not valid UTF-8" in err and "Traceback" not in err
    assert changed_files(before, snapshot(project_dir)) == []
