"""`rooms mcp` is strict, bounded and described: unknown arguments refused, lists limited, every result
checked against its output schema, progress while it blocks, and an answer to every line it is sent."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("mcp", reason="the MCP SDK is the extra rooms-cli[mcp] (in the test extras)")

from tests.conftest import rooms_env  # noqa: E402
from tests.test_mcp import server  # noqa: E402


def run(coro):
    return asyncio.run(coro)


def _tools(mcp_reader):
    return {tool.name: tool for tool in mcp_reader.call(mcp_reader.tools.client.list_tools()).tools}


def test_every_tool_is_titled_annotated_closed_and_has_an_object_output_schema(mcp_reader):
    from jsonschema import Draft202012Validator

    for name, tool in _tools(mcp_reader).items():
        assert tool.title and tool.annotations and tool.annotations.title == tool.title, name
        hints = tool.annotations
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint), name
        assert not (hints.read_only_hint and hints.destructive_hint), name
        assert tool.input_schema["additionalProperties"] is False, name
        assert tool.output_schema and tool.output_schema["type"] == "object", name
        Draft202012Validator.check_schema(tool.output_schema)
        Draft202012Validator.check_schema(tool.input_schema)


def _closest_typo(argument: str) -> str:
    return argument[:-1] if len(argument) > 3 else argument + "x"


def test_every_tool_refuses_an_unknown_argument_naming_it_and_the_closest_valid_one(mcp_reader):
    from mcp.shared.exceptions import MCPError

    tools = _tools(mcp_reader)

    async def go(t):
        refused = {}
        for name, tool in tools.items():
            props = list(tool.input_schema.get("properties", {}))
            typo = _closest_typo(props[0]) if props else "bogus"
            with pytest.raises(MCPError) as caught:
                await t.client.call_tool(name, {typo: "x"})
            refused[name] = (typo, props[0] if props else None, caught.value.error)
        alive = await t.ok("board")
        return refused, alive

    refused, alive = mcp_reader.call(go(mcp_reader.tools))
    assert set(refused) == set(tools)
    for name, (typo, meant, error) in refused.items():
        assert error.code == -32602, name
        assert repr(typo) in error.message and name in error.message, error.message
        if meant:
            assert error.data["did_you_mean"] == meant and f"did you mean {meant!r}" in error.message, error.message
    assert alive["room"] == "default"  # the server keeps serving


def test_a_typo_in_send_is_refused_instead_of_becoming_a_broadcast(mcp_reader, cli):
    from mcp.shared.exceptions import MCPError

    async def go(t):
        with pytest.raises(MCPError) as caught:
            await t.client.call_tool("send", {"too": "ops", "message": "just for ops"})
        with pytest.raises(MCPError) as done:
            await t.client.call_tool("task_done", {"task_id": "t-x", "lease_id": "l-x", "summary": "s", "next": "n"})
        with pytest.raises(MCPError) as artifact:
            await t.client.call_tool("task_done", {"task_id": "t-x", "lease_id": "l-x", "summary": "s", "artifact": ["a"]})
        with pytest.raises(MCPError) as unknown_tool:
            await t.client.call_tool("inbx", {})
        return caught.value.error, done.value.error, artifact.value.error, unknown_tool.value.error

    typo, done, artifact, unknown_tool = mcp_reader.call(go(mcp_reader.tools))
    assert typo.message == "send has no argument 'too'; did you mean 'to'?"
    assert "'next_step'" in done.message and "'artifacts'" in artifact.message
    assert unknown_tool.code == -32602 and "did you mean 'inbox'?" in unknown_tool.message
    for agent in ("ops", "researcher"):  # nothing was sent to anyone
        assert cli("inbox", "--as", agent, "--dir", mcp_reader.project_dir, "--json").json()["messages"] == []


def test_the_bad_lease_error_has_the_same_code_on_the_cli_and_over_mcp(mcp_reader, rooms):
    over_mcp = mcp_reader.call(mcp_reader.tools.error("task_next", lease="forever"))
    cli = rooms("task", "next", "--as", "alice", "--lease", "forever", "--dir", mcp_reader.project_dir, "--json")
    assert cli.exit_code == 2 and cli.err_json()["error"]["code"] == over_mcp["code"] == "usage"
    assert over_mcp["exit_code"] == 2


def test_errors_name_tool_arguments_not_cli_flags(mcp_reader):
    error = mcp_reader.call(mcp_reader.tools.error("task_next", lease="0"))
    assert "argument 'lease'" in error["message"] and "--lease" not in error["message"]


def test_an_error_naming_a_renamed_flag_names_the_tools_argument(project_dir):
    """task_done's next_step is the command line's --next: the declaration says so, and the error says next_step."""
    async def go():
        async with server(project_dir, "alice") as t:
            task = await t.ok("task_add", title="Write the spec", lane="alice", done="spec merged")
            claim = await t.ok("task_claim", task_id=task["id"])
            return await t.error("task_done", task_id=task["id"], lease_id=claim["lease_id"], summary="ok", next_step="x" * 300)

    error = run(go())
    assert error["message"].startswith("argument 'next_step' is 300 characters") and "--next" not in error["message"]


def test_every_declared_tool_names_its_arguments_for_the_flags_of_its_parameters():
    """For every declared tool, an error naming a CLI flag of a parameter the tool takes names the tool's argument
    instead (`--reply-to` -> n, `--unread` -> unread_only, `--all` -> all); a flag of a parameter it does not take stays."""
    from rooms_cli.core.errors import UsageError
    from rooms_cli.mcp_server.server import argument_names, error_result, input_model
    from rooms_cli.mcp_server.tools import TOOLS

    declared = {name: op for name, op in TOOLS.items() if op.declared is not None}
    assert {"reply", "wait", "reserve_files", "release_files", "list_reservations", "check_files", "task_done"} <= set(declared)
    renamed = set()
    for name, op in declared.items():
        arguments = list(input_model(op).model_fields)
        names = argument_names(op, arguments)
        for param in op.declared.params:
            for flag in (f for f in param.flags if f.startswith("--")):
                message = error_result(UsageError(f"{flag}: not like that"), names).structured_content["error"]["message"]
                if param.mcp_name is None:
                    assert message.startswith(flag) or message.startswith("argument "), (name, message)
                    continue
                assert param.mcp_name in arguments, (name, param.name)
                assert message == f"argument {param.mcp_name!r}: not like that", (name, flag, message)
                renamed.add((name, flag, param.mcp_name))
    assert {("reply", "--reply-to", "n"), ("task_done", "--next", "next_step"), ("task_done", "--artifact", "artifacts"),
            ("wait", "--timeout", "timeout_seconds"), ("release_files", "--all", "all")} <= renamed
    claim = TOOLS["task_claim"]
    kept = error_result(UsageError("--lease-id: no such lease"), argument_names(claim, list(input_model(claim).model_fields)))
    assert kept.structured_content["error"]["message"] == "--lease-id: no such lease"  # task_claim takes no lease_id


def test_a_thousand_message_inbox_comes_fifty_at_a_time_and_only_those_are_marked_read(project_dir):
    from rooms_cli.messaging.inbox import deliver
    from rooms_cli.store.paths import open_project

    project = open_project(project_dir)
    for i in range(1000):
        deliver(project, "bob", "alice", f"message {i}")

    async def go():
        async with server(project_dir, "bob") as t:
            first = await t.ok("inbox")
            second = await t.ok("inbox", limit=10)
            peeked = await t.ok("inbox", unread_only=False, peek=True, limit=5, since=first["messages"][-1]["id"])
            return first, second, peeked

    first, second, peeked = run(go())
    assert (first["count"], first["remaining"], len(json.dumps(first)) < 30_000) == (50, 950, True)
    assert [m["text"] for m in first["messages"]][::49] == ["message 0", "message 49"]
    assert first["next_cursor"] == first["messages"][-1]["id"]
    assert [m["text"] for m in second["messages"]][0] == "message 50" and second["remaining"] == 940
    assert [m["text"] for m in peeked["messages"]] == [f"message {i}" for i in range(50, 55)]


def test_transcript_and_roundtable_list_honour_limit_and_cursor(project_dir, rooms):
    from rooms_cli.chat.transcript import append_message
    from rooms_cli.store.paths import open_project

    project = open_project(project_dir)
    for i in range(30):
        append_message(project, "default", "alice", f"line {i}")

    async def go():
        async with server(project_dir, "alice") as t:
            tail = await t.ok("transcript", limit=5)
            start = await t.ok("transcript", limit=1, since="m-0")
            after = await t.ok("transcript", limit=3, since=start["next_cursor"])
            return tail, start, after

    tail, start, after = run(go())
    assert [m["text"] for m in tail["messages"]] == [f"line {i}" for i in range(25, 30)] and tail["earlier"] is True
    assert [m["text"] for m in after["messages"]] == ["line 1", "line 2", "line 3"] and after["remaining"] == 26


def test_events_come_at_most_limit_at_a_time_and_the_rest_on_the_next_call(project_dir, rooms):
    async def go():
        async with server(project_dir, "bob") as t:
            start = await t.ok("events", inboxes=["bob"])
            for i in range(5):
                rooms("send", "--as", "alice", "--to", "bob", f"m{i}")
            pages, cursor = [], start["cursor"]
            for _ in range(3):
                page = await t.ok("events", cursor=cursor, limit=2, wait_seconds=5)
                pages.append(page)
                cursor = page["cursor"]
            return pages

    pages = run(go())
    assert [[e["text"] for e in p["events"]] for p in pages] == [["m0", "m1"], ["m2", "m3"], ["m4"]]
    assert [p["remaining"] for p in pages] == [3, 1, 0]


def test_a_long_gather_reports_progress_and_times_out_by_itself(project_dir):
    (project_dir / ".rooms" / "agents" / "outside.md").write_text(
        "---\nid: outside\nmodel: external\n---\nA coding agent in another terminal.\n")
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(value, total, message):
        seen.append((value, total, message))

    async def go():
        async with server(project_dir, "alice") as t:
            await t.ok("group_spawn", name="slow", profiles=["outside"])
            await t.ok("group_broadcast", name="slow", objective="answer when you can")
            started = time.monotonic()
            result = await t.client.call_tool("group_wait", {"name": "slow", "timeout_seconds": 3},
                                              progress_callback=progress)
            return result, time.monotonic() - started

    result, took = run(go())
    assert result.is_error and json.loads(result.content[0].text)["error"]["code"] == "timed_out"
    assert took < 30
    assert len(seen) >= 2 and all(total == 3 for _v, total, _m in seen)
    assert [v for v, _t, _m in seen] == sorted(v for v, _t, _m in seen)


def test_the_blocking_tools_have_a_default_timeout():
    from rooms_cli.mcp_server.server import input_model
    from rooms_cli.mcp_server.tools import TOOLS, WAIT_DEFAULT_S

    for name in ("wait", "group_wait", "group_ask"):
        assert TOOLS[name].long
        assert input_model(TOOLS[name]).model_fields["timeout_seconds"].default == WAIT_DEFAULT_S


# -- the raw protocol, over a real pipe -----------------------------------------------------------


class Pipe:
    """A `rooms mcp` process spoken to line by line, as a misbehaving client would."""

    def __init__(self, project_dir):
        self.proc = subprocess.Popen([sys.executable, "-m", "rooms_cli", "mcp", "--dir", str(project_dir), "--as", "alice"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=rooms_env({}))
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
        assert self.reply()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def reply(self, timeout: float = 30) -> dict:
        import select

        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        assert ready, "no reply: the server hangs"
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.mark.parametrize("line, code, request_id", [
    ("garbage", -32700, None),
    ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "board"', -32700, None),
    ('{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": "x"}', -32602, 7),
    ('{"jsonrpc": "2.0", "id": "s-1", "method": "tools/list", "params": [1, 2]}', -32602, "s-1"),
    ('{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": ' + "[" * 100_000 + "]" * 100_000 + "}", -32602, 8),
    ('{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "send", "arguments": '
     + '{"a": ' * 200 + "1" + "}" * 200 + "}}", -32602, 9),
    ('{"jsonrpc": "2.0", "id": 10, "method": "no/such/method"}', -32601, 10),
    ('{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": {"name": "board", "arguments": "x"}}', -32602, 11),
    ("[1, 2, 3]", -32600, None),
    ('{"jsonrpc": "1.0", "id": 12, "method": "ping"}', -32600, 12),
], ids=["garbage", "cut-line", "params-string", "params-array", "100000-deep", "200-deep-arguments", "unknown-method",
        "arguments-string", "batch", "wrong-version"])
def test_every_bad_line_gets_an_error_reply_with_its_id_and_the_server_goes_on(project_dir, line, code, request_id):
    pipe = Pipe(project_dir)
    try:
        pipe.send(line)
        answer = pipe.reply()
        assert (answer["id"], answer["error"]["code"]) == (request_id, code), answer
        assert answer["error"]["message"]
        pipe.send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
        assert pipe.reply() == {"jsonrpc": "2.0", "id": 99, "result": {}}
    finally:
        pipe.close()


def test_resources_read_the_board_an_inbox_and_a_room_without_changing_anything(project_dir, rooms):
    from mcp.shared.exceptions import MCPError

    rooms("task", "add", "Write the spec", "--lane", "alice", "--done", "spec exists")
    rooms("send", "--as", "bob", "--to", "alice", "ping")
    rooms("chat", "--as", "alice", "@researcher what is the rate limit?")

    async def go():
        async with server(project_dir, "alice") as t:
            listed = (await t.client.list_resources()).resources
            templates = (await t.client.list_resource_templates()).resource_templates
            read = {}
            for uri in ("rooms://board", "rooms://board/default", "rooms://inbox/alice", "rooms://room/default"):
                read[uri] = (await t.client.read_resource(uri)).contents[0]
            with pytest.raises(MCPError) as missing:
                await t.client.read_resource("rooms://room/nosuch")
            with pytest.raises(MCPError) as unknown:
                await t.client.read_resource("rooms://nothing/here")
            return listed, templates, read, missing.value.error, unknown.value.error

    listed, templates, read, missing, unknown = run(go())
    assert {str(r.uri) for r in listed} == {"rooms://board", "rooms://inbox/alice", "rooms://room/default"}
    assert {t.uri_template for t in templates} == {"rooms://board/{room}", "rooms://inbox/{agent}", "rooms://room/{room}"}
    assert "Write the spec" in read["rooms://board"].text and read["rooms://board/default"].text == read["rooms://board"].text
    inbox = json.loads(read["rooms://inbox/alice"].text)
    assert [m["text"] for m in inbox["messages"]] == ["ping"]
    assert "researcher: " in read["rooms://room/default"].text
    assert missing.code == -32002 and "nosuch" in missing.message
    assert unknown.code == -32002 and "rooms://board" in unknown.message
    # reading the inbox marked nothing read
    assert rooms("inbox", "--as", "alice", "--unread", "--json").json()["unread"] == 1


def test_prompts_join_a_room_and_work_the_board(mcp_reader):
    from mcp.shared.exceptions import MCPError

    async def go(t):
        prompts = (await t.client.list_prompts()).prompts
        join = await t.client.get_prompt("join_room", {"room": "specs"})
        work = await t.client.get_prompt("work_the_board", {})
        with pytest.raises(MCPError) as bad:
            await t.client.get_prompt("work_the_board", {"rom": "x"})
        return prompts, join, work, bad.value.error

    prompts, join, work, bad = mcp_reader.call(go(mcp_reader.tools))
    assert {p.name for p in prompts} == {"join_room", "work_the_board"}
    assert all(p.title and p.description for p in prompts)
    join_text, work_text = join.messages[0].content.text, work.messages[0].content.text
    assert "You are alice" in join_text and "'specs'" in join_text and "attention" in join_text
    assert "task_next" in work_text and "task_done" in work_text and "'default'" in work_text
    assert bad.code == -32602 and "'rom'" in bad.message


# -- the line screen, as properties ------------------------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_line_gets_either_a_pass_or_a_well_formed_error(line):
    from rooms_cli.mcp_server.transport import screen

    answer = screen(line)
    assert answer is None or answer == {} or (
        answer["jsonrpc"] == "2.0" and answer["error"]["code"] in (-32700, -32600, -32602) and "id" in answer)


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.integers(), st.text(max_size=10)), JSON, st.integers(min_value=0, max_value=300))
def test_the_id_of_a_request_survives_any_params_and_any_depth(request_id, params, depth):
    from rooms_cli.mcp_server.transport import MAX_DEPTH, screen, shallow

    nested = "[" * depth + json.dumps(params) + "]" * depth
    line = '{"jsonrpc": "2.0", "id": ' + json.dumps(request_id) + ', "method": "tools/call", "params": ' + nested + "}"
    assert shallow(line)["id"] == request_id
    answer = screen(line)
    if depth > 0 or not isinstance(params, dict):  # params that are not an object
        assert answer is not None and answer["id"] == request_id and answer["error"]["code"] == -32602
    elif depth + 3 <= MAX_DEPTH and answer:
        assert answer["id"] == request_id
