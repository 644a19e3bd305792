"""`/pass` is one rule (rooms_cli/core/passes.py): chat, messaging's wake and watch read a reply alike."""

from __future__ import annotations

import sys
import textwrap

import pytest

from rooms_cli.core.passes import could_still_be_pass, is_pass, read_structured


@pytest.mark.parametrize("text", [
    "/pass", "/pass.", " /PASS! ", "`/pass`", "**/pass**", "_/pass_", '"/pass"', "ops: /pass", "ops: architect: /pass",
    "/pass — nothing to add", "/pass (nothing new here)", "Nothing new from me. /pass", "I'll /pass on this one.",
    "PASS", "Pass.", "I'll pass.", "Pass: nothing to add", "“/pass”",
])
def test_a_short_reply_that_passes_in_any_dress_is_a_pass(text):
    assert is_pass(text)


@pytest.mark.parametrize("text", [
    "/passing", "", "pass the salt, please", "Passwords must rotate weekly.",
    "We should add a /pass rule to the docs so that agents stop answering every question with long replies.",
    "/pass\n\nActually, the lock order in the worker is the real problem here.",
])
def test_a_reply_that_says_more_is_not_a_pass(text):
    assert not is_pass(text)


def test_a_streamed_reply_is_held_back_only_while_it_could_still_be_a_pass():
    assert could_still_be_pass("/pa") and could_still_be_pass("`/pass.") and could_still_be_pass("ops: Nothing new")
    assert not could_still_be_pass("The deploy failed because the migration locked the users table for ten minutes")
    assert not could_still_be_pass("Hello\n\nthere")


@pytest.mark.parametrize(("raw", "read"), [
    ('{"speak": false, "message": ""}', (False, "")),
    ('{"speak": true, "message": "Roll back first."}', (True, "Roll back first.")),
    ('{"speak": true, "message": "/pass"}', (False, "/pass")),
    ('```json\n{"speak": true, "message": "ok then"}\n```', (True, "ok then")),
    ('{"speak": true, "message": "cut sh', (True, "cut sh")),  # the limit cut the object
    ('{"speak": true, "message": "tab\\tand \\u00e9\\u', (True, "tab\tand é")),
])
def test_a_structured_reply_is_read_even_when_cut(raw, read):
    assert read_structured(raw) == read


@pytest.mark.parametrize("raw", ["Roll back first.", '{"speak": "yes"}', "[1, 2]"])
def test_text_that_is_not_the_object_is_left_to_the_text_reading(raw):
    assert read_structured(raw) is None


def test_a_woken_agent_that_answers_pass_with_a_period_sends_no_reply(cli, project, project_dir, tmp_path):
    """messaging's wake once compared the text literally, so `/pass.` was delivered as a reply."""
    script = tmp_path / "passer.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('/pass.')\n")
    import yaml

    config_path = project_dir / ".rooms.yaml"
    config = yaml.safe_load(config_path.read_text()) or {}
    config["providers"] = {**(config.get("providers") or {}), "passer": {"type": "command", "command": [sys.executable, str(script)]}}
    config_path.write_text(yaml.safe_dump(config))
    (project_dir / ".rooms" / "agents" / "quiet.md").write_text(textwrap.dedent("""\
        ---
        model: passer:default
        ---
        You are quiet.
        """))
    run = cli("send", "--as", "alice", "--to", "quiet", "--wake", "anything to add?", "--json")
    assert run.exit_code == 0, run.stderr
    from rooms_cli.messaging.inbox import read_inbox

    assert read_inbox(project, "alice") == []
