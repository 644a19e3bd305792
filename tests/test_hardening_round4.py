"""Hardening round four (issue 38): the adversarial cases of that round, each as it was found.

A cache a clone can carry, one bad notification, a kill at the first write, a complete last line
taken for a torn tail, absurd durations, far-future stamps, a fast clock, the commit guard, MCP
taking what the CLI refuses, doctor's blind spots: docs/hardening.md, "Round four"."""

from __future__ import annotations

import json


def test_an_acknowledged_message_whose_line_lost_its_newline_is_kept_and_its_number_never_reused(cli, project_dir):
    """Item 4: the last line of an inbox is whole JSON without its newline (a hand edit): `inbox --peek`
    shows it, the next `send` finishes the line instead of deleting it, and numbers go on."""
    assert cli("send", "first", "--to", "bob", "--as", "alice").exit_code == 0
    assert cli("send", "second", "--to", "bob", "--as", "alice").exit_code == 0
    log = project_dir / ".rooms" / "inbox" / "bob.jsonl"
    log.write_bytes(log.read_bytes().rstrip(b"\n"))
    peek = cli("inbox", "--peek", "--as", "bob", "--json")
    assert [m["text"] for m in peek.json()["messages"]] == ["first", "second"]
    sent = cli("send", "third", "--to", "bob", "--as", "alice", "--json")
    assert sent.exit_code == 0 and "removed" not in sent.stderr
    messages = cli("inbox", "--peek", "--as", "bob", "--json").json()["messages"]
    assert [(m["n"], m["text"]) for m in messages] == [(1, "first"), (2, "second"), (3, "third")]
    assert all(json.loads(line) for line in log.read_text().splitlines())
