"""What a task's record cites: every search hit's `ref` is taken by `task done --artifact`, `--result-ref` and
`task set-status --result-ref` (CLI and MCP), checked to exist and stored with the full id; anything else is
refused in one sentence (rooms_cli/board/references.py)."""

from __future__ import annotations

import json
import os

import pytest

from rooms_cli.agents.memories import add_lessons, forget
from rooms_cli.board.references import FORMS
from rooms_cli.chat.rooms import create_room
from rooms_cli.chat.transcript import append_message
from rooms_cli.groups.broadcasts import record_reply
from rooms_cli.messaging.inbox import deliver

ROOM = "api"


@pytest.fixture
def hits(project, cli):
    """One record of each kind about "persistence" — chat in another room than the citing task's, a task on
    another room's board too — and the hits `rooms search --json` gives for them, by kind (a group's by event)."""
    create_room(project, ROOM, ["architect"])
    create_room(project, "ops", ["reviewer"])
    append_message(project, "ops", "alice", "Redis persistence: AOF every second.")
    deliver(project, "reviewer", "bob", "Is persistence on for the session store?")
    cli("task", "add", "Turn persistence on", "--lane", "reviewer", "--done", "AOF on", "--room", "ops", "--as", "carol")
    cli("group", "spawn", "rev", "--profile", "reviewer")
    broadcast = cli("group", "broadcast", "rev", "--objective", "Check the persistence plan", "--output-format", "",
                    "--tool-guidance", "", "--boundaries", "", "--as", "dana", "--json").json()
    record_reply(project, "rev", broadcast["broadcast_id"], "reviewer", "The persistence plan holds.")
    add_lessons(project, "analyst", ["Ask about persistence before the price."], "rt-1")
    found = cli("search", "persistence", "--json")
    assert found.exit_code == 0, found.stderr
    by_kind = {hit.get("event", hit["kind"]): hit for hit in found.json()}
    assert sorted(by_kind) == ["broadcast", "chat", "memory", "message", "reply", "task"]
    return by_kind


def claimed(cli, title: str = "Pick the session store") -> tuple[str, str]:
    """A new task of room api, claimed by architect: (its id, the lease id)."""
    task = cli("task", "add", title, "--lane", "architect", "--done", "the decision is cited", "--room", ROOM, "--json").json()
    claim = cli("task", "claim", task["id"], "--room", ROOM, "--as", "architect", "--json")
    assert claim.exit_code == 0, claim.stderr
    return task["id"], claim.json()["lease_id"]


def test_each_kind_of_search_hit_is_printed_in_its_form(hits):
    forms = {kind: hit["ref"].partition(":")[0] for kind, hit in hits.items()}
    assert forms == {"chat": "msg", "task": "task", "message": "inbox", "broadcast": "group", "reply": "group", "memory": "lesson"}
    assert {kind: hit["ref"].partition(":")[2] for kind, hit in hits.items()} == {kind: hit["id"] for kind, hit in hits.items()}


def test_a_search_hit_of_every_kind_is_cited_in_a_done_record_from_the_command_line(cli, hits):
    task_id, lease = claimed(cli)
    refs = [hit["ref"] for hit in hits.values()]
    done = cli("task", "done", task_id, "--lease-id", lease, "--summary", "redis with AOF", "--room", ROOM, "--as", "architect",
               *(arg for ref in refs for arg in ("--artifact", ref)), "--result-ref", hits["reply"]["ref"], "--json")
    assert done.exit_code == 0, done.stderr
    assert (done.json()["artifacts"], done.json()["result_ref"]) == (refs, hits["reply"]["ref"])
    record = cli("task", "show", task_id, "--room", ROOM, "--json").json()["record"]
    assert record["artifacts"] == refs and record["result_ref"] == hits["reply"]["ref"]


def test_set_status_takes_a_search_hit_of_every_kind_as_its_result_ref(cli, hits):
    task_id, lease = claimed(cli)
    for kind, hit in hits.items():
        moved = cli("task", "set-status", task_id, "blocked", "--result-ref", hit["ref"], "--room", ROOM, "--lease-id", lease,
                    "--as", "architect", "--json")
        assert moved.exit_code == 0, (kind, moved.stderr)
        assert moved.json()["record"]["result_ref"] == hit["ref"]
        lease = cli("task", "claim", cli("task", "set-status", task_id, "todo", "--room", ROOM, "--json").json()["id"],
                    "--room", ROOM, "--as", "architect", "--json").json()["lease_id"]


def test_a_unique_prefix_of_each_id_is_stored_as_the_full_id(cli, hits):
    """As git takes a commit: the kind letters may be left out and case does not count. (24 of 26
    characters: ids minted in one millisecond share their first 16 or more, so 20 was at times ambiguous.)"""
    task_id, lease = claimed(cli)
    shortened = [f"{form}:{rid.split('-', 1)[1][:24].lower()}" for form, _, rid in (hit["ref"].partition(":") for hit in hits.values())]
    done = cli("task", "done", task_id, "--lease-id", lease, "--summary", "x", "--room", ROOM, "--as", "architect",
               *(arg for ref in shortened for arg in ("--artifact", ref)), "--json")
    assert done.exit_code == 0, done.stderr
    assert done.json()["artifacts"] == [hit["ref"] for hit in hits.values()]


@pytest.mark.parametrize(("ref", "code", "says"), [
    ("msg:m-01NOSUCH", "not_found", "artifact msg:m-01NOSUCH is not a message in the transcript of room 'api' nor of any other room"),
    ("task:t-01NOSUCH", "not_found", "artifact task:t-01NOSUCH is not a task on the board of room 'api' nor of any other room"),
    ("inbox:i-01NOSUCH", "not_found", "artifact inbox:i-01NOSUCH is not a message in any inbox"),
    ("group:b-01NOSUCH", "not_found", "artifact group:b-01NOSUCH is not a broadcast or a reply in any group"),
    ("lesson:l-01NOSUCH", "not_found", "artifact lesson:l-01NOSUCH is not a lesson of any agent (a forgotten one no longer is)"),
    ("mail:i-01", "invalid_input", f"artifact 'mail:i-01' is not a reference: use {FORMS}"),
    ("task:", "invalid_input", f"artifact 'task:' is not a reference: use {FORMS}"),
    ("t-01KV3Z", "invalid_input", f"artifact 't-01KV3Z' is not a reference (an id alone: cite it as task:t-01KV3Z): use {FORMS}"),
])
def test_a_bad_or_missing_reference_is_refused_in_one_sentence_exit_1_and_nothing_is_written(cli, hits, ref, code, says):
    task_id, lease = claimed(cli)
    before = cli("task", "show", task_id, "--room", ROOM, "--json").json()
    refused = cli("task", "done", task_id, "--lease-id", lease, "--summary", "x", "--artifact", hits["chat"]["ref"],
                  "--artifact", ref, "--room", ROOM, "--as", "architect", "--json")
    assert refused.exit_code == 1
    assert json.loads(refused.stderr)["error"] == {"code": code, "message": says}
    status = cli("task", "set-status", task_id, "blocked", "--result-ref", ref, "--lease-id", lease, "--room", ROOM)
    assert (status.exit_code, status.stderr.strip()) == (1, "error: " + says.replace("artifact", "result_ref", 1))
    assert cli("task", "show", task_id, "--room", ROOM, "--json").json() == before


def test_a_forgotten_lesson_and_a_group_event_that_is_no_broadcast_or_reply_are_not_cited(cli, project, hits):
    from rooms_cli.groups.log import read_events

    task_id, lease = claimed(cli)
    created = next(ev["eid"] for ev in read_events(project, "rev") if ev["ev"] == "created")
    forget(project, "analyst", [hits["memory"]["id"]])
    for ref in (hits["memory"]["ref"], f"group:{created}"):
        refused = cli("task", "done", task_id, "--lease-id", lease, "--summary", "x", "--artifact", ref, "--room", ROOM,
                      "--as", "architect", "--json")
        assert refused.exit_code == 1 and json.loads(refused.stderr)["error"]["code"] == "not_found", ref


def test_an_ambiguous_prefix_is_refused_naming_what_it_matches(cli, project):
    create_room(project, ROOM, ["architect"])
    first, second = add_lessons(project, "analyst", ["Lead with churn.", "Churn is seasonal."], "rt-1")
    task_id, lease = claimed(cli)
    refused = cli("task", "done", task_id, "--lease-id", lease, "--summary", "x", "--artifact", "lesson:l-", "--room", ROOM,
                  "--as", "architect")
    assert refused.exit_code == 1
    assert "is ambiguous" in refused.stderr and first["id"] in refused.stderr and second["id"] in refused.stderr


def test_msg_and_task_prefixes_look_in_the_task_s_own_room_first(cli, project):
    """A prefix that matches in the task's room and in another room is the own room's; one that matches only
    in another room is found there."""
    create_room(project, ROOM, ["architect"])
    create_room(project, "ops", ["reviewer"])
    there = append_message(project, "ops", "alice", "said in ops")
    here = append_message(project, ROOM, "alice", "said here")
    task_id, lease = claimed(cli)
    other = cli("task", "add", "Elsewhere", "--lane", "reviewer", "--done", "d", "--room", "ops", "--json").json()["id"]
    both_messages, both_tasks = os.path.commonprefix([here.id, there.id]), os.path.commonprefix([task_id, other])
    assert len(both_messages) > 2 and len(both_tasks) > 2  # ids minted in one second share their time
    done = cli("task", "done", task_id, "--lease-id", lease, "--summary", "x", "--room", ROOM, "--as", "architect", "--json",
               "--artifact", f"msg:{both_messages}", "--artifact", f"msg:{there.id}", "--artifact", f"task:{both_tasks}",
               "--artifact", f"task:{other}")
    assert done.exit_code == 0, done.stderr
    assert done.json()["artifacts"] == [f"msg:{here.id}", f"msg:{there.id}", f"task:{task_id}", f"task:{other}"]


# -- MCP: the same forms, the same checks -------------------------------------------------------------

def test_mcp_task_done_and_task_status_cite_what_the_search_tool_found_and_refuse_the_rest(project_dir, project, hits):
    pytest.importorskip("mcp", reason="the MCP SDK is the extra rooms-cli[mcp] (in the test extras)")
    import anyio
    import mcp_types as types

    from rooms_cli.mcp_server.server import Tools
    from rooms_cli.mcp_server.tools import Session
    from rooms_cli.project.context import Context

    ctx = Context.open(str(project_dir), as_="architect")
    tools = Tools(Session(project=ctx.project, config=ctx.config, me=ctx.me, default_room=ROOM))

    def call(name: str, **arguments) -> tuple[bool, dict]:
        async def go():
            return await tools.call(None, types.CallToolRequestParams(name=name, arguments=arguments))

        result = anyio.run(go)
        if isinstance(result, dict):
            return result["isError"], json.loads(result["content"][0]["text"])
        return result.is_error, json.loads(result.content[0].text)

    failed, found = call("search", query="persistence")
    refs = [hit["ref"] for hit in found["hits"]]
    assert not failed and sorted(refs) == sorted(hit["ref"] for hit in hits.values())
    failed, task = call("task_add", title="Cite it", lane="architect", done="cited")
    failed, claim = call("task_claim", task_id=task["id"])
    failed, error = call("task_done", task_id=task["id"], lease_id=claim["lease_id"], summary="cited", artifacts=[*refs, "lesson:l-01NO"])
    assert failed and error["error"] == {"code": "not_found", "exit_code": 1,
                                         "message": "artifact lesson:l-01NO is not a lesson of any agent (a forgotten one no longer is)"}
    failed, record = call("task_done", task_id=task["id"], lease_id=claim["lease_id"], summary="cited", artifacts=refs,
                          result_ref=hits["message"]["ref"])
    assert not failed, record
    assert (record["artifacts"], record["result_ref"]) == (refs, hits["message"]["ref"])

    failed, other = call("task_add", title="Blocked on it", lane="architect", done="unblocked")
    failed, error = call("task_status", task_id=other["id"], status="blocked", result_ref="inbox:i-01NOSUCH")
    assert failed and error["error"]["code"] == "not_found" and error["error"]["exit_code"] == 1
    failed, error = call("task_status", task_id=other["id"], status="blocked", result_ref=hits["message"]["id"])
    assert failed and error["error"]["code"] == "invalid_input" and error["error"]["exit_code"] == 1
    assert error["error"]["message"].endswith(f"(an id alone: cite it as inbox:{hits['message']['id']}): use {FORMS}")
    failed, moved = call("task_status", task_id=other["id"], status="blocked", result_ref=hits["broadcast"]["ref"])
    assert not failed and moved["record"]["result_ref"] == hits["broadcast"]["ref"]
