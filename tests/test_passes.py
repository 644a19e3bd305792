"""`/pass` is one rule (rooms_cli/passes.py): chat, messaging's wake and watch read a reply alike."""

from __future__ import annotations

import sys
import textwrap

import pytest

from rooms_cli.passes import could_still_be_pass, is_pass


@pytest.mark.parametrize("text", ["/pass", "/pass.", " /PASS! ", "`/pass`", "**/pass**", "_/pass_"])
def test_a_bare_pass_in_any_dress_is_a_pass(text):
    assert is_pass(text)


@pytest.mark.parametrize("text", ["/passing", "I /pass", "/pass because nothing", ""])
def test_a_reply_that_says_more_is_not_a_pass(text):
    assert not is_pass(text)


def test_a_streamed_reply_is_held_back_only_while_it_could_still_be_a_pass():
    assert could_still_be_pass("/pa") and could_still_be_pass("`/pass.")
    assert not could_still_be_pass("/passing") and not could_still_be_pass("Hello")


def test_a_woken_agent_that_answers_pass_with_a_period_sends_no_reply(cli, project, project_dir, tmp_path):
    """messaging's wake once compared the text literally, so `/pass.` was delivered as a reply."""
    script = tmp_path / "passer.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('/pass.')\n")
    with open(project_dir / ".rooms.yaml", "a") as fh:
        fh.write(f"\nproviders:\n  passer: {{type: command, command: [{sys.executable!r}, {str(script)!r}]}}\n")
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
