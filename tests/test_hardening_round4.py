"""Hardening round four (issue 38): the adversarial cases of that round, each as it was found.

A cache a clone can carry, one bad notification, a kill at the first write, a complete last line
taken for a torn tail, absurd durations, far-future stamps, a fast clock, the commit guard, MCP
taking what the CLI refuses, doctor's blind spots: docs/hardening.md, "Round four"."""

from __future__ import annotations

import json

import pytest


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


@pytest.mark.parametrize("args, largest", [
    (["task", "next", "--as", "worker", "--lease", "99999999d"], "7d"),
    (["task", "next", "--as", "worker", "--lease", "1e308"], "7d"),
    (["task", "next", "--as", "worker", "--lease", "8d"], "7d"),
    (["files", "reserve", "src/**", "--as", "worker", "--ttl", "99999999d"], "7d"),
    (["files", "reserve", "src/**", "--as", "worker", "--ttl", "1e308"], "7d"),
    (["wait", "--as", "worker", "--timeout", "99999999d"], "365d"),
    (["group", "wait", "g", "--timeout", "1e308"], "365d"),
    (["watch", "--timeout", "400d"], "365d"),
])
def test_an_absurd_duration_is_a_usage_error_naming_the_largest_accepted_value(cli, project_dir, args, largest):
    """Item 5: `--lease 99999999d` was an internal error (OverflowError) after parsing: every duration goes
    through one bounded parser (store/clock.parse_duration), so it is exit 2 and one sentence."""
    before = sorted(p.relative_to(project_dir) for p in (project_dir / ".rooms").rglob("*") if "run" not in p.parts)
    result = cli(*args)
    assert result.exit_code == 2, result.stderr
    assert f"the largest accepted is {largest}" in result.stderr and result.stderr.count("\n") == 1
    assert "internal error" not in result.stderr
    after = sorted(p.relative_to(project_dir) for p in (project_dir / ".rooms").rglob("*") if "run" not in p.parts)
    assert after == before
