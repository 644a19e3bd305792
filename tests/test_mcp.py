"""`rooms mcp`, driven by the MCP SDK's own client over stdio against real `rooms mcp` processes."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import subprocess
import sys
import threading
from contextlib import asynccontextmanager

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is the extra rooms-cli[mcp] (in the test extras)")

from tests.conftest import rooms_env  # noqa: E402

FAMILIES = {
    "board": {"board", "task_show", "task_add", "task_claim", "task_next", "task_renew", "task_release", "task_done", "task_status",
              "task_list", "task_ready", "task_update", "task_archive", "task_assign", "task_accept", "task_reject"},
    "messaging": {"send", "reply", "inbox", "attention", "status", "status_set", "spawn", "wait"},
    "groups": {"group_spawn", "group_broadcast", "group_wait", "group_status", "group_ask", "group_reply", "group_cancel",
               "group_list", "group_dissolve"},
    "chat": {"chat", "transcript", "room_create", "room_list", "room_show", "room_invite", "room_kick"},
    "memory": {"memory_list", "memory_forget"},
    "roundtable": {"roundtable_run", "roundtable_queue", "roundtable_list"},
    "events": {"events"},
    "sync": {"sync"},
    "search": {"search"},
    "files": {"reserve_files", "release_files", "list_reservations", "check_files"},
}


@asynccontextmanager
async def server(project_dir, as_: str | None = "alice", *extra: str, env: dict | None = None):
    """A real `rooms mcp` subprocess and an initialized SDK client talking to it over stdio."""
    from mcp import Client, StdioServerParameters

    args = ["-m", "rooms_cli", "mcp", "--dir", str(project_dir), *(["--as", as_] if as_ else []), *extra]
    params = StdioServerParameters(command=sys.executable, args=args, env=env or rooms_env({}), cwd=str(project_dir))
    async with Client(params, read_timeout_seconds=120) as client:
        yield Tools(client)


class Reader:
    """One `rooms mcp --as alice` process and its SDK client, kept open for the tests of a module whose calls
    change nothing (listings, refusals, errors, reads): a server start costs more than all their calls.
    The session lives in one task of an event loop running in a thread of its own (anyio's task groups in
    the client are entered and left by that task); `call` runs a coroutine there and returns its result."""

    def __init__(self, project_dir) -> None:
        self.project_dir = project_dir
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="mcp-reader", daemon=True)
        self.thread.start()
        self._opened: concurrent.futures.Future = concurrent.futures.Future()
        self._done = asyncio.Event()
        env = {k: v for k, v in rooms_env({}).items() if not k.startswith("ROOMS_")}  # no test's env applies yet
        self._holder = asyncio.run_coroutine_threadsafe(self._hold(env), self.loop)
        self.tools: Tools = self._opened.result(120)

    async def _hold(self, env: dict) -> None:
        try:
            async with server(self.project_dir, "alice", env=env) as tools:
                self._opened.set_result(tools)
                await self._done.wait()
        except BaseException as exc:
            if not self._opened.done():
                self._opened.set_exception(exc)
            raise

    def call(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(120)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._done.set)
        self._holder.result(60)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


class Tools:
    def __init__(self, client):
        self.client = client

    async def raw(self, tool: str, /, **arguments):
        return await self.client.call_tool(tool, arguments)

    async def ok(self, tool: str, /, **arguments):
        result = await self.raw(tool, **arguments)
        assert not result.is_error, result.content[0].text
        return json.loads(result.content[0].text)

    async def error(self, tool: str, /, **arguments) -> dict:
        result = await self.raw(tool, **arguments)
        assert result.is_error, result.content[0].text
        doc = json.loads(result.content[0].text)
        assert result.structured_content == doc
        return doc["error"]


def run(coro):
    return asyncio.run(coro)


def test_every_family_is_listed_with_a_description_and_a_schema(mcp_reader):
    tools = {tool.name: tool for tool in mcp_reader.call(mcp_reader.tools.client.list_tools()).tools}
    assert set(tools) == set().union(*FAMILIES.values())
    for tool in tools.values():
        assert tool.description and len(tool.description) > 30, tool.name
        assert tool.input_schema["type"] == "object"
        assert "s" not in tool.input_schema.get("properties", {})  # the session is not an argument
    read_only = {name for name, tool in tools.items() if tool.annotations and tool.annotations.read_only_hint}
    assert read_only >= {"board", "task_show", "group_status", "transcript", "events", "roundtable_list"}
    assert not read_only & {"send", "inbox", "attention", "task_claim", "wait"}  # these change state (inbox marks read)
    claim = tools["task_claim"].input_schema
    assert claim["required"] == ["task_id"] and "description" in claim["properties"]["lease"]


def test_board_tools_add_claim_and_finish_a_task_the_cli_then_shows(project_dir, rooms):
    async def go():
        async with server(project_dir, "researcher") as t:
            task = await t.ok("task_add", title="Write the auth spec", lane="researcher", done="specs/auth.md exists")
            claim = await t.ok("task_next", lease="15m")
            assert claim["task"]["id"] == task["id"] and claim["lease"]["holder"] == "researcher"
            renewed = await t.ok("task_renew", task_id=task["id"][:8], lease_id=claim["lease_id"], lease="20m")
            assert renewed["status"] == "doing"
            shown = await t.ok("task_show", task_id=task["id"])
            assert [e["ev"] for e in shown["history"]][:2] == ["create", "claim"]
            record = await t.ok("task_done", task_id=task["id"], lease_id=claim["lease_id"], summary="spec written")
            assert record["summary"] == "spec written"
            assert await t.ok("task_next") == {"task": None, "lease": None, "lease_id": None}
            board = await t.ok("board")
            return task["id"], board

    task_id, board = run(go())
    assert [t["id"] for t in board["done"]] == [task_id]
    assert rooms("task", "show", task_id, "--json").json()["status"] == "done"


def test_two_servers_racing_for_one_task_exactly_one_wins(project_dir, rooms):
    task_id = rooms("task", "add", "Fix login", "--lane", "dev", "--done", "tests pass", "--json").json()["id"]

    async def claim_as(name: str):
        async with server(project_dir, name) as t:
            return await t.raw("task_claim", task_id=task_id)

    async def race():
        return await asyncio.gather(claim_as("frontend"), claim_as("backend"))

    results = run(race())
    winners = [r for r in results if not r.is_error]
    losers = [json.loads(r.content[0].text)["error"] for r in results if r.is_error]
    assert len(winners) == 1 and len(losers) == 1
    assert losers[0]["code"] == "already_claimed" and losers[0]["exit_code"] == 3
    holder = json.loads(winners[0].content[0].text)["lease"]["holder"]
    assert holder in losers[0]["message"]
    assert rooms("task", "show", task_id, "--json").json()["lease"]["holder"] == holder


def test_messaging_tools_send_reply_read_and_attend(project_dir):
    async def go():
        async with server(project_dir, "frontend") as front, server(project_dir, "backend") as back:
            await front.ok("status_set", text="Working on the login form")
            sent = await front.ok("send", to="backend", message="can you take the API?")
            assert sent["to"] == ["backend"]
            block = await back.ok("attention", peek=True)
            assert [m["content"] for m in block["messages"]] == ["can you take the API?"]
            assert "[rooms] You are backend." in block["text"] and "Working on the login form" in block["text"]
            mail = await back.ok("inbox")
            assert (mail["unread"], mail["marked_read"]) == (1, True)
            assert (await back.ok("inbox"))["messages"] == []  # unread only, by default
            assert len((await back.ok("inbox", unread_only=False))["messages"]) == 1
            await back.ok("reply", n=1, message="yes, on it")
            await back.ok("reply", n=mail["messages"][0]["id"][:12], message="by id too")  # a ref works as well
            answer = (await front.ok("inbox", peek=True))["messages"][-2]
            assert "text" in answer and "content" not in answer  # one shape: the inbox record
            assert (answer["from"], answer["text"], answer["reply_to"]) == ("backend", "yes, on it", 1)
            waited = await front.ok("wait", timeout_seconds=5)
            assert waited["timed_out"] is False and [m["text"] for m in waited["messages"]] == ["yes, on it", "by id too"]
            spawned = await front.ok("spawn", prompt="Write the API docs", description="api docs")
            assert spawned["parent"] == "frontend"
            done = await front.ok("wait", timeout_seconds=60)
            return done

    done = run(go())
    assert done["spawns"] and done["spawns"][0]["status"] in ("done", "failed")
    assert done["messages"] and done["messages"][0]["kind"] in ("spawn_output", "spawn_error")


def test_group_tools_spawn_broadcast_wait_and_ask(project_dir):
    async def go():
        async with server(project_dir, "alice") as t:
            members = await t.ok("group_spawn", name="panel", profiles=["analyst", "wildcard"])
            assert [m["handle"] for m in members["members"]] == ["analyst", "wildcard"]
            sent = await t.ok("group_broadcast", name="panel", objective="ship Friday? YES or NO")
            status = await t.ok("group_status", name="panel")
            assert status["in_flight"]["broadcast_id"] == sent["broadcast_id"]
            result = await t.ok("group_wait", name="panel", reducer="join_by_handle", timeout_seconds=60)
            assert set(result["by_member"]) == {"analyst", "wildcard"}
            asked = await t.ok("group_ask", profiles=["analyst", "analyst", "wildcard"], objective="ship it? YES or NO",
                               reducer="majority_vote", timeout_seconds=60)
            assert asked["metadata"]["members"] == 3
            missing = await t.error("group_wait", name="nosuch")
            return missing

    assert run(go())["code"] == "not_found"


def test_chat_posts_a_message_and_returns_the_replies(project_dir, rooms):
    async def go():
        async with server(project_dir, "alice") as t:
            turn = await t.ok("chat", message="@researcher what is the rate limit on the API?")
            tail = (await t.ok("transcript", limit=5))["messages"]
            refused = await t.error("chat", message="/drop")
            return turn, tail, refused

    turn, tail, refused = run(go())
    assert turn["message"]["speaker"] == "alice" and [r["speaker"] for r in turn["replies"]] == ["researcher"]
    assert [m["id"] for m in tail][-2:] == [turn["message"]["id"], turn["replies"][0]["id"]]
    assert refused["code"] == "invalid_input"
    assert rooms("transcript", "--last", "1", "--json").json()[0]["speaker"] == "researcher"


def test_roundtable_tools_run_one_and_queue_one(project_dir, rooms):
    async def go():
        async with server(project_dir, "alice") as t:
            result = await t.ok("roundtable_run", format="debate", topic="monorepo or not",
                                participants=["analyst", "hustler"], turns=2, force=True)
            queued = await t.ok("roundtable_queue", format="retro", topic="last sprint")
            listed = (await t.ok("roundtable_list"))["items"]
            bad = await t.error("roundtable_queue", format="nosuchformat")
            return result, queued, listed, bad

    result, queued, listed, bad = run(go())
    assert len(result["turns"]) == 2 and set(result["participants"]) == {"analyst", "hustler"}
    assert [item["id"] for item in listed] == [queued["id"]]
    assert bad["code"] == "not_found"
    assert rooms("roundtable", "queue", "--json").json()[0]["id"] == queued["id"]


def test_events_since_a_cursor_come_once_and_survive_a_restart(project_dir, rooms):
    async def first():
        async with server(project_dir, "bob") as t:
            start = await t.ok("events")
            assert start["events"] == []
            rooms("send", "--as", "alice", "--to", "bob", "ping")
            new = await t.ok("events", cursor=start["cursor"], wait_seconds=10)
            again = await t.ok("events", cursor=new["cursor"])
            return new, again

    new, again = run(first())
    assert [(e["type"], e["agent"], e["text"]) for e in new["events"]] == [("inbox.direct", "bob", "ping")]
    assert again["events"] == []
    rooms("send", "--as", "alice", "--to", "bob", "pong")

    async def restarted():
        async with server(project_dir, "bob") as t:
            later = await t.ok("events", cursor=again["cursor"])
            bad = await t.error("events", cursor="garbage")
            return later, bad

    later, bad = run(restarted())
    # an unknown cursor restarts from its instant: nothing later is lost, only that instant may repeat
    assert [e["text"] for e in later["events"] if e["type"] == "inbox.direct"] in (["pong"], ["ping", "pong"])
    assert bad["code"] == "invalid_input"


def test_bad_arguments_are_tool_errors_and_the_server_keeps_serving(mcp_reader):
    async def go(t):
        errors = [
            await t.error("task_claim"),  # missing
            await t.error("task_add", title="x", lane="dev", done="y", room="../etc"),  # bad id
            await t.error("task_next", lease="forever"),  # bad duration
            await t.error("inbox", unread_only={"not": "a bool"}),  # wrong type
            await t.error("wait", timeout_seconds=-1),  # out of range
            await t.error("send", message=""),  # empty
        ]
        alive = await t.ok("board")
        return errors, alive

    errors, alive = mcp_reader.call(go(mcp_reader.tools))
    # a bad lease, or an empty message, is a usage error (exit 2) here as on the command line (`--lease forever`)
    assert [e["code"] for e in errors] == ["usage", "invalid_input", "usage", "usage", "usage", "usage"]
    assert [e["exit_code"] for e in errors] == [2, 1, 2, 2, 2, 2]
    for err in errors:
        assert "\n" not in err["message"] and "Traceback" not in err["message"]
    assert "task_id" in errors[0]["message"] and "forever" in errors[2]["message"]
    assert alive["room"] == "default"


def test_the_identity_comes_from_rooms_agent_when_no_as_is_given(project_dir, monkeypatch):
    monkeypatch.setenv("ROOMS_AGENT", "ops")

    async def go():
        async with server(project_dir, None) as t:
            return await t.ok("attention", peek=True)

    assert run(go())["agent"] == "ops"


def test_outside_a_project_the_server_refuses_to_start_in_one_sentence(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "rooms_cli", "mcp", "--dir", str(tmp_path / "nowhere")],
                          input="", capture_output=True, text=True, env=rooms_env({"ROOMS_DIR": ""}), timeout=60)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.startswith("error: ") and proc.stderr.count("\n") == 1


def test_without_the_sdk_rooms_mcp_names_the_extra(project_dir):
    code = "import sys; sys.modules['mcp'] = None; sys.argv = ['rooms', 'mcp']; from rooms_cli.cli.app import main; main()"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rooms_env({}), timeout=60)
    assert proc.returncode == 1
    assert "pip install -e '.[mcp]' (in " in proc.stderr  # the suite runs from a checkout (store/installation.py)


def test_rooms_help_imports_neither_mcp_nor_pydantic():
    code = ("import sys; sys.argv = ['rooms', '--help']\nfrom rooms_cli.cli.app import main\ntry: main()\n"
            "except SystemExit: pass\nprint(sorted(m for m in ('mcp', 'pydantic', 'rooms_cli.mcp_server') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=rooms_env({}), timeout=60)
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_the_example_mcp_json_starts_a_working_server(project_dir, monkeypatch):
    import os
    import re

    from tests.conftest import REPO

    monkeypatch.delenv("ROOMS_AGENT", raising=False)
    entry = json.loads((REPO / "examples" / "mcp" / "mcp.json").read_text())["mcpServers"]["rooms"]
    assert (entry["type"], entry["command"], entry["args"]) == ("stdio", "rooms", ["mcp"])
    # expand ${VAR:-default} as Claude Code does, with ROOMS_AGENT unset
    env = {k: re.sub(r"\$\{(\w+):-([^}]*)\}", lambda m: os.environ.get(m[1], m[2]), v) for k, v in entry["env"].items()}
    assert env == {"ROOMS_AGENT": "frontend"}

    async def go():
        from mcp import Client, StdioServerParameters

        params = StdioServerParameters(command=sys.executable, args=["-m", "rooms_cli", *entry["args"]],
                                       env={**rooms_env({}), **env}, cwd=str(project_dir))
        async with Client(params) as client:
            return json.loads((await client.call_tool("attention", {"peek": True})).content[0].text)

    assert run(go())["agent"] == "frontend"


def test_a_blocking_call_holds_up_no_quick_call_of_its_session(project_dir):
    """A quick tool runs on the server's event loop (no thread hand-off); a waiting one in a worker thread,
    so quick calls sent after it are answered while it still waits."""
    import time

    async def go():
        async with server(project_dir, "alice") as t:
            started = time.monotonic()
            waiting = asyncio.ensure_future(t.ok("events", inboxes=["carol"], wait_seconds=4))
            await asyncio.sleep(0.3)
            quick = [await t.ok("board"), await t.ok("task_list"), await t.ok("inbox", peek=True)]
            answered = time.monotonic() - started
            still_waiting = not waiting.done()
            await waiting
            return quick, answered, still_waiting

    quick, answered, still_waiting = run(go())
    assert still_waiting and answered < 3.5
    assert quick[0]["room"] == "default" and quick[1]["tasks"] == [] and quick[2]["messages"] == []


def test_which_calls_run_on_the_loop(project_dir):
    """Only calls that work on the project's files alone skip the worker thread: not one that runs a model,
    a process, the network or a wait, nor a claim synced through the remote, a send that wakes, or events
    that wait."""
    import threading

    import anyio
    import mcp_types as types

    from rooms_cli.mcp_server.server import Tools
    from rooms_cli.mcp_server.tools import TOOLS, Session
    from rooms_cli.project.context import Context
    from rooms_cli.store import paths

    slow = {"chat", "spawn", "wait", "sync", "roundtable_run", "roundtable_queue", "group_spawn", "group_broadcast",
            "group_wait", "group_ask", "group_reply", "group_cancel", "group_dissolve", "group_status", "group_list"}
    assert not [name for name, op in TOOLS.items() if op.quick is True and (op.long or name in slow)]
    assert not [name for name in slow if TOOLS[name].quick]
    ctx = Context.open(str(project_dir), as_="alice")
    session = Session(project=ctx.project, config=ctx.config, me=ctx.me, default_room=ctx.room)
    tools = Tools(session)

    def inline(name: str, **arguments) -> bool:
        return TOOLS[name].runs_inline(session, tools.arguments(name, arguments))

    assert inline("task_next") and inline("task_next", sync=False) and not inline("task_next", sync=True)
    assert inline("task_claim", task_id="t1") and not inline("task_claim", task_id="t1", sync=True)
    assert inline("send", message="hi") and not inline("send", message="hi", wake=True)
    assert inline("events") and not inline("events", wait_seconds=1)
    assert inline("board") and inline("inbox") and inline("task_done", task_id="t1", summary="s", lease_id="l")

    where: dict[str, str] = {}
    scoped: dict[str, bool] = {}  # whether the call ran as one operation (each folder's symlink check once)

    async def call(name: str, **arguments) -> None:
        result = await tools.call(None, types.CallToolRequestParams(name=name, arguments=arguments))
        assert not result["isError"] if isinstance(result, dict) else not result.is_error

    async def go() -> None:
        where["loop"] = threading.current_thread().name
        for name, arguments in (("board", {}), ("group_list", {})):
            op = TOOLS[name]
            original = op.fn

            def spy(*args, original=original, name=name, **kwargs):
                where[name] = threading.current_thread().name
                scoped[name] = paths._CHECKED.get(threading.get_ident()) is not None
                return original(*args, **kwargs)

            object.__setattr__(op, "fn", spy)
            try:
                await call(name, **arguments)
            finally:
                object.__setattr__(op, "fn", original)

    anyio.run(go)
    assert where["board"] == where["loop"] and where["group_list"] != where["loop"]
    assert scoped == {"board": True, "group_list": False}  # a tool that may run a while checks every path whole


def test_the_middleware_answers_quick_calls_of_the_handshake_era_and_leaves_the_rest_to_the_sdk(project_dir):
    """server.QuickCalls answers a quick tool's call itself (encoded once) only when everything is plain; any
    other call reaches the SDK's handler (`call_next`) without having run."""
    from types import SimpleNamespace

    import anyio

    from rooms_cli.board.tasks import add_task
    from rooms_cli.mcp_server.server import QuickCalls, Tools
    from rooms_cli.mcp_server.tools import Session
    from rooms_cli.mcp_server.transport import Encoded
    from rooms_cli.project.context import Context
    from rooms_cli.store.paths import open_project

    add_task(open_project(project_dir), "default", "one", lane="alice", done="done", by="bob")
    ctx = Context.open(str(project_dir), as_="alice")
    quick = QuickCalls(Tools(Session(project=ctx.project, config=ctx.config, me=ctx.me, default_room=ctx.room)))
    initialized = SimpleNamespace(client_params=object())

    def route(name, arguments: dict | None = None, version: str = "2025-11-25", session=initialized, **more):
        passed: list[str] = []

        async def call_next(ctx):
            passed.append(str(ctx.params["name"]))
            return {"by": "sdk"}

        params = {"name": name, **({} if arguments is None else {"arguments": arguments}), **more}
        context = SimpleNamespace(method="tools/call", params=params, protocol_version=version, session=session)
        answer = anyio.run(quick, context, call_next)
        return ("sdk" if passed else "here"), answer

    where, answer = route("board")
    assert where == "here" and isinstance(answer["structuredContent"], Encoded) and answer["isError"] is False
    assert json.loads(answer["structuredContent"].text) == json.loads(answer["content"][0]["text"])
    assert route("task_list", {"status": "todo"})[0] == "here"
    assert route("task_claim", {"task_id": "nope"}, "2024-11-05")[1]["isError"] is True  # a tool error, made here
    assert route("board", {"lane": 5})[1]["structuredContent"]["error"]["code"] == "usage"
    assert "resultType" not in route("board", {"lane": 5})[1]  # sieved for the handshake era, as the SDK does
    assert route("board", _meta={"progressToken": "p"})[0] == "here"
    # the SDK's way: the 2026 era, no handshake yet, a request the surface refuses, a tool that is not quick,
    # a claim synced through the remote, a send that wakes its recipient, an unknown tool
    assert route("board", version="2026-07-28") == ("sdk", {"by": "sdk"})
    assert route("board", session=SimpleNamespace(client_params=None))[0] == "sdk"
    assert route("board", _meta={"progressToken": [1]})[0] == "sdk"
    assert route("group_list")[0] == "sdk"
    assert route("task_next", {"sync": True})[0] == "sdk"
    assert route("send", {"message": "hi", "wake": True})[0] == "sdk"
    assert route("no_such_tool")[0] == "sdk"
    assert route(["board"])[0] == "sdk"  # a name that is not text: the SDK's surface check words it
    assert [t["status"] for t in json.loads(route("task_list")[1]["content"][0]["text"])["tasks"]] == ["todo"]  # nothing ran
    with pytest.raises(Exception, match="did you mean 'lane'"):  # the SDK's invalid params, as Tools.call raises it
        route("board", {"lame": "alice"})
