"""One shape per record: the JSON Schemas of docs/json.md are those of rooms_cli/core/shapes.py, and the real
`--json` output of every command docs/json.md names validates against them; list commands print bare
lists; usage errors are JSON under --json."""

from __future__ import annotations

import json
import re

import pytest
from jsonschema import Draft202012Validator

from rooms_cli.core.shapes import RECORDS
from tests.conftest import REPO


def _resolve(value):
    if isinstance(value, dict):
        if set(value) == {"$ref"}:
            return RECORDS[value["$ref"]]
        return {k: _resolve(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    return value


def documented_schemas() -> dict[str, dict]:
    text = (REPO / "docs" / "json.md").read_text()
    return {kind: _resolve(json.loads(block))
            for kind, block in re.findall(r"^### (\w+)\n\n.*?```json\n(.*?)\n```", text, re.S | re.M)}


def test_docs_json_shows_the_schema_of_every_record_kind_exactly():
    documented = documented_schemas()
    assert set(documented) == set(RECORDS)
    for kind, schema in RECORDS.items():
        assert documented[kind] == schema, kind
        Draft202012Validator.check_schema(schema)


def check(kind: str, *documents) -> None:
    validator = Draft202012Validator(RECORDS[kind])
    assert documents, kind
    for doc in documents:
        errors = list(validator.iter_errors(doc))
        assert not errors, (kind, errors[0].message, doc)


def ok(run):
    assert run.exit_code == 0, run.stderr
    return run.json()


def test_every_command_prints_its_records_in_the_documented_shape(project_dir, cli):
    (project_dir / "spec.md").write_text("# Spec\n")
    added = ok(cli("task", "add", "Write the spec", "--lane", "alice", "--done", "spec exists", "--json"))
    check("task", added)
    claim = ok(cli("task", "claim", added["id"], "--as", "alice", "--json"))
    check("claim", claim)
    check("lease", claim["lease"])
    check("task", ok(cli("task", "renew", added["id"], "--lease-id", claim["lease_id"], "--as", "alice", "--json")))
    check("task", ok(cli("task", "show", added["id"], "--json")))
    listed = ok(cli("task", "list", "--json"))
    assert isinstance(listed, list)
    check("task", *listed)
    board = ok(cli("board", "--json"))
    check("task", *[t for lane in board["lanes"] for t in lane["tasks"]])
    result = ok(cli("task", "done", added["id"], "--lease-id", claim["lease_id"], "--summary", "written",
                    "--artifact", "file:spec.md", "--as", "alice", "--json"))
    check("result", result)
    check("task", *ok(cli("board", "--json"))["done"])
    other = ok(cli("task", "add", "Review", "--lane", "alice", "--done", "reviewed", "--json"))
    check("claim", ok(cli("task", "next", "--as", "alice", "--json")))
    check("task", ok(cli("task", "update", other["id"], "--title", "Review it", "--json")))
    sent = ok(cli("send", "--as", "alice", "--to", "bob", "ping", "--json"))
    check("sent", sent, ok(cli("send", "--as", "bob", "--reply-to", "1", "pong", "--json")))
    check("message", *ok(cli("inbox", "--as", "bob", "--json"))["messages"])
    cli("send", "--as", "carol", "--to", "alice", "hello", "--json")
    waited = ok(cli("wait", "--as", "alice", "--timeout", "5", "--json"))
    assert [m["text"] for m in waited["messages"]] == ["pong", "hello"]
    check("message", *waited["messages"])
    members = ok(cli("group", "spawn", "panel", "--profile", "analyst", "--json"))["members"]
    check("member", *members, *ok(cli("group", "status", "panel", "--json"))["members"])
    reservation = ok(cli("files", "reserve", "src/**", "--as", "alice", "--json"))
    check("reservation", reservation, *ok(cli("files", "list", "--json")))
    check("reservation", *ok(cli("files", "release", "--all", "--as", "alice", "--json")))


@pytest.mark.parametrize("command", [
    ["task", "list"], ["transcript"], ["room", "list"], ["group", "list"], ["memory", "list"],
    ["roundtable", "queue"], ["agent", "list"], ["agents"], ["files", "list"],
])
def test_a_list_command_prints_a_bare_list(project_dir, cli, command):
    assert isinstance(ok(cli(*command, "--json")), list)


@pytest.mark.parametrize("args, says", [
    (["task", "claim"], "Missing argument"),
    (["task", "list", "--bogus"], "No such option: --bogus"),
    (["--bogus"], "No such option"),
    (["task", "list", "--status", "nope"], "--status"),
])
def test_usage_errors_are_json_under_json(project_dir, rooms, args, says):
    run = rooms(*args, "--json")
    assert run.exit_code == 2 and run.stdout == ""
    error = run.err_json()["error"]
    assert error["code"] == "usage" and says in error["message"]
    assert run.stderr.count("\n") == 1


def test_send_dash_reads_the_message_from_stdin(project_dir, rooms):
    assert rooms("send", "-", "--to", "bob", "--as", "alice", input="two\nlines\n").exit_code == 0
    [message] = rooms("inbox", "--as", "bob", "--json").json()["messages"]
    assert message["text"] == "two\nlines\n"
